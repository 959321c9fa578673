//! The screen's tail cache through the real `wyckoff` binary, offline, on a fresh data home
//! over the bundled real bars: a screen builds the cache, the next one reads it (the
//! `--timings` stages say which: `stored series` is the database's read, `tail cache` the
//! file's), a bar written by `data import` shows in the next screen at once (whether or not
//! the import brought the cache in step), and a damaged file gives the same screen and is
//! built anew.
//! The output is byte for byte the one the database alone gives.
//! Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use wyckoff_e2e::show;

const CACHE: &str = "market-tail.cache";

/// One `wyckoff --timings screen --json` run: its stdout and the stage names it timed.
struct Screen {
    json: String,
    stages: Vec<String>,
}

impl Screen {
    fn read_the_database(&self) -> bool {
        self.stages.iter().any(|s| s == "stored series")
    }

    fn read_the_cache(&self) -> bool {
        self.stages.iter().any(|s| s == "tail cache") && !self.read_the_database()
    }

    fn wrote_the_cache(&self) -> bool {
        self.stages.iter().any(|s| s == "tail cache write")
    }
}

fn screen(home: &Path, env: &[(&str, &str)]) -> Screen {
    let out = wyckoff_e2e::wyckoff_cli(home)
        .args(["--timings", "screen", "--json"])
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    // `timing <indent><stage> <ms> ms`
    let stages = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter_map(|l| l.strip_prefix("timing "))
        .filter_map(|l| l.trim().rsplitn(3, ' ').nth(2))
        .map(|s| s.trim().to_string())
        .collect();
    Screen {
        json: String::from_utf8(out.stdout).unwrap(),
        stages,
    }
}

fn import(home: &Path, csv: &Path, env: &[(&str, &str)]) {
    let out = wyckoff_e2e::wyckoff_cli(home)
        .args(["data", "import", csv.to_str().unwrap()])
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
}

/// The screen with the cache out of the picture: the database's answer.
fn uncached(home: &Path) -> String {
    let s = screen(home, &[("WYCKOFF_TAIL_CACHE", "off")]);
    assert!(
        s.read_the_database() && !s.wrote_the_cache(),
        "{:?}",
        s.stages
    );
    s.json
}

/// A bar for 000001 (its bundled bars end on 2020-06-16) on `date`, closing at `close`.
fn one_bar(dir: &Path, date: &str, close: f64) -> std::path::PathBuf {
    let file = dir.join(format!("bar-{date}.csv"));
    std::fs::write(
        &file,
        format!(
            "date,code,open,high,low,close,volume,amount\n{date},000001,{o},{h},{l},{close},1500000,{a}\n",
            o = close - 0.1,
            h = close + 0.2,
            l = close - 0.2,
            a = close * 1_500_000.0,
        ),
    )
    .unwrap();
    file
}

#[test]
fn the_cache_is_read_once_built_and_never_gives_a_stale_screen() {
    let home = tempfile::tempdir().unwrap();
    let csv = tempfile::tempdir().unwrap();

    // no cache yet: the database is read and the cache built from what was read
    let first = screen(home.path(), &[]);
    assert!(
        first.read_the_database() && first.wrote_the_cache(),
        "{:?}",
        first.stages
    );
    // beside the database
    let cache = find(home.path(), CACHE).unwrap_or_else(|| panic!("no {CACHE} under the home"));
    assert!(cache.with_file_name("wyckoff.db").exists());
    let second = screen(home.path(), &[]);
    assert!(second.read_the_cache(), "{:?}", second.stages);
    assert_eq!(second.json, first.json);
    assert_eq!(second.json, uncached(home.path()));

    // an import writes a bar and brings the cache in step as it ends
    import(home.path(), &one_bar(csv.path(), "2020-06-17", 13.5), &[]);
    let after = screen(home.path(), &[]);
    assert!(after.read_the_cache(), "{:?}", after.stages);
    assert_ne!(after.json, first.json, "the new bar is not in the screen");
    assert!(after.json.contains("2020-06-17"), "{}", after.json);
    assert_eq!(after.json, uncached(home.path()));
    // the same with the file gone: read from the database, the file built again
    std::fs::remove_file(&cache).unwrap();
    let rebuilt = screen(home.path(), &[]);
    assert!(
        rebuilt.read_the_database() && rebuilt.wrote_the_cache(),
        "{:?}",
        rebuilt.stages
    );
    assert_eq!(rebuilt.json, after.json);
    assert!(cache.exists());

    // a write that leaves the cache behind (this import keeps off it): the next screen
    // sees the cache is of an older write generation, reads the database and has the bar
    let held = std::fs::read(&cache).unwrap();
    import(
        home.path(),
        &one_bar(csv.path(), "2020-06-18", 14.1),
        &[("WYCKOFF_TAIL_CACHE", "off")],
    );
    assert_eq!(std::fs::read(&cache).unwrap(), held, "the import kept off");
    let later = screen(home.path(), &[]);
    assert!(
        later.read_the_database() && later.wrote_the_cache(),
        "{:?}",
        later.stages
    );
    assert!(later.json.contains("2020-06-18"), "{}", later.json);
    assert_eq!(later.json, uncached(home.path()));
    assert_ne!(std::fs::read(&cache).unwrap(), held);

    // a damaged file: the same screen, from the database, and a sound file again
    let mut bytes = std::fs::read(&cache).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(&cache, &bytes).unwrap();
    let damaged = screen(home.path(), &[]);
    assert!(
        damaged.read_the_database() && damaged.wrote_the_cache(),
        "{:?}",
        damaged.stages
    );
    assert_eq!(damaged.json, later.json);
    let again = screen(home.path(), &[]);
    assert!(again.read_the_cache(), "{:?}", again.stages);
    assert_eq!(again.json, later.json);

    // cut short: the same again
    let bytes = std::fs::read(&cache).unwrap();
    std::fs::write(&cache, &bytes[..bytes.len() - 1000]).unwrap();
    let short = screen(home.path(), &[]);
    assert!(short.read_the_database(), "{:?}", short.stages);
    assert_eq!(short.json, later.json);
    assert!(screen(home.path(), &[]).read_the_cache());
}

#[test]
fn a_screen_of_a_past_day_reads_the_database_and_leaves_the_cache_alone() {
    let home = tempfile::tempdir().unwrap();
    assert!(screen(home.path(), &[]).wrote_the_cache());
    let cache = find(home.path(), CACHE).unwrap();
    let held = std::fs::read(&cache).unwrap();
    let run = |env: &[(&str, &str)]| {
        let out = wyckoff_e2e::wyckoff_cli(home.path())
            .args(["--timings", "screen", "--json", "--as-of", "2020-03-02"])
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", show(&out));
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (String::from_utf8(out.stdout).unwrap(), stderr)
    };
    let (past, stderr) = run(&[]);
    assert!(stderr.contains(" stored series "), "{stderr}");
    assert!(!stderr.contains("tail cache write"), "{stderr}");
    assert!(past.contains("2020-03-02"), "{past}");
    assert_eq!(past, run(&[("WYCKOFF_TAIL_CACHE", "off")]).0);
    assert_eq!(std::fs::read(&cache).unwrap(), held);
}

fn find(dir: &Path, name: &str) -> Option<std::path::PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.file_name().is_some_and(|n| n == name) {
            return Some(path);
        }
        if path.is_dir()
            && let Some(found) = find(&path, name)
        {
            return Some(found);
        }
    }
    None
}
