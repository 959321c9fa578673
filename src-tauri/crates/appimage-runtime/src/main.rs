//! The runtime at the front of the Wyckoff Desk AppImage.
//!
//! An AppImage is this ELF program with a squashfs image appended. The image holds an
//! AppDir (`AppRun`, the desk, the CLI, the .desktop entry, the icon). The runtime does
//! not mount it (that needs FUSE, which many desktops and every container lack): it extracts
//! the image once into the user's cache, under a directory named by the SHA-256 of the
//! image, and then runs `AppRun` with the arguments it was given and
//! `APPIMAGE` (the image's absolute path, which the updater replaces) and `APPDIR` set, as
//! the AppImage runtime does. A new version is a new hash, so it is extracted afresh and the
//! older extractions are removed.
//!
//! Flags of its own (the names the standard runtime uses):
//! `--appimage-offset` prints where the squashfs starts (for `unsquashfs -o`),
//! `--appimage-extract [DIR]` extracts to DIR (default `squashfs-root`) and exits.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{PermissionsExt, symlink};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use backhand::{FilesystemReader, InnerNode};
use sha2::{Digest, Sha256};

/// The directory under the user's cache that holds the extractions.
const CACHE_NAME: &str = "wyckoff-desk/appimage";

fn main() {
    if let Err(e) = run() {
        let _ = writeln!(io::stderr(), "Wyckoff Desk AppImage: {e:#}");
        std::process::exit(127);
    }
}

fn run() -> Result<()> {
    let image = std::env::current_exe().context("cannot find the AppImage's own path")?;
    let mut args = std::env::args_os();
    let argv0 = args
        .next()
        .unwrap_or_else(|| image.clone().into_os_string());
    let args: Vec<OsString> = args.collect();

    let mut file = File::open(&image)
        .with_context(|| format!("cannot open the AppImage {}", image.display()))?;
    let offset = payload_offset(&mut file)
        .with_context(|| format!("{} is not a complete AppImage", image.display()))?;

    match args.first().and_then(|a| a.to_str()) {
        Some("--appimage-offset") => {
            writeln!(io::stdout(), "{offset}")?;
            return Ok(());
        }
        Some("--appimage-extract") => {
            let dest = args
                .get(1)
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("squashfs-root"));
            extract(&image, offset, &dest)?;
            writeln!(io::stdout(), "{}", dest.display())?;
            return Ok(());
        }
        _ => {}
    }

    let key = image_key(&mut file, offset)?;
    drop(file);
    let cache = cache_root()?.join(CACHE_NAME);
    let appdir = extracted(&image, offset, &cache, &key)?;

    let app_run = appdir.join("AppRun");
    let err = Command::new(&app_run)
        .args(&args)
        .env("APPIMAGE", &image)
        .env("APPDIR", &appdir)
        .env("ARGV0", &argv0)
        .exec();
    bail!("cannot run {}: {err}", app_run.display())
}

/// Where the appended squashfs starts: the end of the runtime's ELF file, which is the end
/// of its section header table (the last thing a linker writes). The squashfs magic is
/// checked there, so a truncated or foreign file is refused before anything is extracted.
fn payload_offset(file: &mut (impl Read + Seek)) -> Result<u64> {
    let mut header = [0u8; 64];
    file.seek(SeekFrom::Start(0))?;
    file.read_exact(&mut header)
        .context("shorter than an ELF header")?;
    let offset = elf_end(&header)?;
    let mut magic = [0u8; 4];
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(&mut magic)
        .context("nothing is appended to the runtime")?;
    if &magic != b"hsqs" {
        bail!("no squashfs image at byte {offset} (found {magic:02x?})");
    }
    Ok(offset)
}

/// The end of a 64-bit little-endian ELF file from its header:
/// `e_shoff + e_shentsize * e_shnum`.
fn elf_end(header: &[u8; 64]) -> Result<u64> {
    if &header[0..4] != b"\x7fELF" {
        bail!("not an ELF file");
    }
    if header[4] != 2 || header[5] != 1 {
        bail!("not a 64-bit little-endian ELF file");
    }
    let mut shoff = [0u8; 8];
    shoff.copy_from_slice(&header[0x28..0x30]);
    let shoff = u64::from_le_bytes(shoff);
    let shentsize = u64::from(u16::from_le_bytes([header[0x3a], header[0x3b]]));
    let shnum = u64::from(u16::from_le_bytes([header[0x3c], header[0x3d]]));
    shoff
        .checked_add(shentsize * shnum)
        .context("the ELF header's section table overflows")
}

/// The SHA-256 of the squashfs, in hex: an extraction is reused only for the very same image.
fn image_key(file: &mut (impl Read + Seek), offset: u64) -> Result<String> {
    file.seek(SeekFrom::Start(offset))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

fn cache_root() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        Some(home) => Ok(PathBuf::from(home).join(".cache")),
        None => bail!("neither XDG_CACHE_HOME nor HOME is set: nowhere to extract the AppImage"),
    }
}

/// The extraction of this image, made now if there is none. It is written beside its final
/// place and renamed into it, so a directory with the image's key is always complete, and two
/// starts at once each extract and the first rename wins. Extractions of other images (the
/// version before an update) are removed afterwards.
fn extracted(image: &Path, offset: u64, cache: &Path, key: &str) -> Result<PathBuf> {
    let appdir = cache.join(key);
    if appdir.join("AppRun").exists() {
        return Ok(appdir);
    }
    fs::create_dir_all(cache)
        .with_context(|| format!("cannot create the cache folder {}", cache.display()))?;
    fs::set_permissions(cache, fs::Permissions::from_mode(0o700))?;
    let partial = cache.join(format!(".{key}.partial-{}", std::process::id()));
    extract(image, offset, &partial)?;
    if let Err(e) = fs::rename(&partial, &appdir) {
        // Another start finished first: its extraction is the same image.
        let _ = fs::remove_dir_all(&partial);
        if !appdir.join("AppRun").exists() {
            return Err(e)
                .with_context(|| format!("cannot move the extraction to {}", appdir.display()));
        }
    }
    remove_other_extractions(cache, key);
    Ok(appdir)
}

fn remove_other_extractions(cache: &Path, key: &str) {
    let Ok(entries) = fs::read_dir(cache) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        // Only finished extractions (64 hex digits): a partial one may be another start's.
        let is_extraction = name.len() == 64 && name.bytes().all(|b| b.is_ascii_hexdigit());
        if is_extraction && name != key {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

/// Writes every directory, file and symlink of the image under `dest` with the image's
/// permission bits. Paths come from the image's own directory tree, which cannot name `..`.
fn extract(image: &Path, offset: u64, dest: &Path) -> Result<()> {
    let file = BufReader::new(
        File::open(image).with_context(|| format!("cannot open {}", image.display()))?,
    );
    let fs_reader = FilesystemReader::from_reader_with_offset(file, offset)
        .with_context(|| format!("cannot read the squashfs image in {}", image.display()))?;
    fs::create_dir_all(dest).with_context(|| format!("cannot create {}", dest.display()))?;
    for node in fs_reader.files() {
        let relative = node.fullpath.strip_prefix("/").unwrap_or(&node.fullpath);
        let path = dest.join(relative);
        let mode = u32::from(node.header.permissions) & 0o7777;
        match &node.inner {
            InnerNode::Dir(_) => {
                fs::create_dir_all(&path)
                    .with_context(|| format!("cannot create {}", path.display()))?;
                fs::set_permissions(&path, fs::Permissions::from_mode(mode | 0o700))?;
            }
            InnerNode::File(file) => {
                let mut out = File::create(&path)
                    .with_context(|| format!("cannot write {}", path.display()))?;
                let mut reader = fs_reader.file(file).reader();
                io::copy(&mut reader, &mut out)
                    .with_context(|| format!("cannot extract {}", path.display()))?;
                fs::set_permissions(&path, fs::Permissions::from_mode(mode))?;
            }
            InnerNode::Symlink(link) => {
                symlink(&link.link, &path)
                    .with_context(|| format!("cannot link {}", path.display()))?;
            }
            // An AppDir has no devices, pipes or sockets; nothing to run needs them.
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn elf_header(shoff: u64, shentsize: u16, shnum: u16) -> [u8; 64] {
        let mut h = [0u8; 64];
        h[0..4].copy_from_slice(b"\x7fELF");
        h[4] = 2;
        h[5] = 1;
        h[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
        h[0x3a..0x3c].copy_from_slice(&shentsize.to_le_bytes());
        h[0x3c..0x3e].copy_from_slice(&shnum.to_le_bytes());
        h
    }

    #[test]
    fn the_payload_starts_after_the_section_header_table() {
        let header = elf_header(200, 64, 3);
        assert_eq!(elf_end(&header).unwrap(), 200 + 64 * 3);
        let mut image = header.to_vec();
        image.resize(392, 0);
        image.extend_from_slice(b"hsqs rest of the image");
        assert_eq!(payload_offset(&mut Cursor::new(image)).unwrap(), 392);
    }

    #[test]
    fn a_runtime_with_nothing_appended_or_a_foreign_file_is_refused() {
        let header = elf_header(200, 64, 3);
        let mut bare = header.to_vec();
        bare.resize(392, 0);
        let err = payload_offset(&mut Cursor::new(bare)).unwrap_err();
        assert!(
            format!("{err:#}").contains("nothing is appended"),
            "{err:#}"
        );

        let mut other = header.to_vec();
        other.resize(392, 0);
        other.extend_from_slice(b"PK\x03\x04");
        let err = payload_offset(&mut Cursor::new(other)).unwrap_err();
        assert!(
            format!("{err:#}").contains("no squashfs image at byte 392"),
            "{err:#}"
        );

        let err = elf_end(&[0u8; 64]).unwrap_err();
        assert_eq!(err.to_string(), "not an ELF file");
    }

    #[test]
    fn the_key_changes_with_any_byte_of_the_image_and_ignores_the_runtime() {
        let a = image_key(&mut Cursor::new(b"runtime-Ahsqs-image-1".to_vec()), 9).unwrap();
        let b = image_key(&mut Cursor::new(b"runtime-Bhsqs-image-1".to_vec()), 9).unwrap();
        let c = image_key(&mut Cursor::new(b"runtime-Ahsqs-image-2".to_vec()), 9).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.len(), 64);
    }

    #[test]
    fn older_extractions_go_and_partial_ones_stay() {
        let cache = tempfile::tempdir().unwrap();
        let keep = "a".repeat(64);
        let old = "b".repeat(64);
        let partial = format!(".{}.partial-42", "c".repeat(64));
        for name in [&keep, &old, &partial] {
            fs::create_dir(cache.path().join(name)).unwrap();
        }
        remove_other_extractions(cache.path(), &keep);
        assert!(cache.path().join(&keep).exists());
        assert!(!cache.path().join(&old).exists());
        assert!(cache.path().join(&partial).exists());
    }
}
