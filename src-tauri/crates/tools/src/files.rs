//! `read_file` and `write_file` (requires approval), confined to allowed roots
//! (REFERENCE §2.6; default root `$WYCKOFF_HOME/workspace/`, created on demand).
//!
//! A path is resolved before the check: relative paths start at the first root, symlinks
//! and `..` are resolved on the part that exists, and a `..` in the part that does not
//! exist yet is refused. So a symlink inside a root pointing outside it is refused too.

use std::path::{Component, Path, PathBuf};

use serde_json::{Value, json};
use wyckoff_agent::ToolError;
use wyckoff_protocol::ApprovalPreview;

pub const READ_NAME: &str = "read_file";
pub const READ_DISPLAY_NAME: &str = "读取文件";
pub const READ_DESCRIPTION: &str = "读取工作目录（及设置中允许的目录）内的文本文件。相对路径从工作目录开始。超过大小上限的部分不返回；二进制文件会被拒绝。";
pub const WRITE_NAME: &str = "write_file";
pub const WRITE_DISPLAY_NAME: &str = "写入文件";
pub const WRITE_DESCRIPTION: &str = "把文本写入工作目录（及设置中允许的目录）内的文件（需要用户批准），覆盖原内容；结果给出改动的 unified diff。";

/// Largest part of a file `read_file` returns.
pub const READ_CAP_BYTES: usize = 256 * 1024;
/// Largest content `write_file` accepts.
pub const WRITE_CAP_BYTES: usize = 1024 * 1024;

pub fn read_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {"path": {"type": "string", "description": "文件路径（相对路径从工作目录开始）"}},
        "required": ["path"]
    })
}

pub fn write_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "文件路径（相对路径从工作目录开始）"},
            "content": {"type": "string", "description": "完整的新内容"}
        },
        "required": ["path", "content"]
    })
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> ToolError {
    ToolError::Failed(format!("{what} {}: {e}", path.display()))
}

/// The allowed roots, canonicalized: the first (the workspace, where relative paths
/// start) is created when missing; a further folder from Settings that does not exist
/// (an unmounted drive, a typo) is left out rather than created.
pub fn prepare_roots(roots: &[PathBuf]) -> Result<Vec<PathBuf>, ToolError> {
    let Some((workspace, extra)) = roots.split_first() else {
        return Err(ToolError::Failed(
            "no folder is allowed for file tools".into(),
        ));
    };
    std::fs::create_dir_all(workspace).map_err(|e| io_error("cannot create", workspace, e))?;
    let mut prepared = vec![
        workspace
            .canonicalize()
            .map_err(|e| io_error("cannot resolve", workspace, e))?,
    ];
    for root in extra {
        match root.canonicalize() {
            Ok(path) if path.is_dir() => prepared.push(path),
            Ok(_) => {
                tracing::warn!(root = %root.display(), "file-tool folder is not a folder; left out")
            }
            Err(e) => {
                tracing::warn!(root = %root.display(), error = %e, "file-tool folder is unusable; left out")
            }
        }
    }
    Ok(prepared)
}

/// Resolves `requested` and checks it lies inside one of `roots` (canonical).
pub fn resolve_inside(requested: &str, roots: &[PathBuf]) -> Result<PathBuf, ToolError> {
    let requested = requested.trim();
    if requested.is_empty() {
        return Err(ToolError::InvalidArgs(
            "path must be a non-empty string".into(),
        ));
    }
    if requested.contains('\0') {
        return Err(ToolError::InvalidArgs("path contains a NUL byte".into()));
    }
    let base = roots
        .first()
        .ok_or_else(|| ToolError::Failed("no folder is allowed for file tools".into()))?;
    let joined = base.join(requested);
    // The deepest part that exists is canonicalized (symlinks, `..`); the rest is appended
    // as plain names.
    let mut existing = joined.as_path();
    let mut missing = Vec::new();
    while !existing.exists() {
        // `missing/..` cannot be resolved without guessing what `missing` would be.
        let Some(name) = existing.file_name() else {
            return Err(ToolError::InvalidArgs(format!(
                "path {requested:?} uses .. below a folder that does not exist"
            )));
        };
        missing.push(name.to_os_string());
        existing = existing.parent().unwrap_or(existing);
    }
    let mut resolved = existing
        .canonicalize()
        .map_err(|e| io_error("cannot resolve", existing, e))?;
    for name in missing.iter().rev() {
        let part = Path::new(name);
        if part
            .components()
            .any(|c| !matches!(c, Component::Normal(_)))
        {
            return Err(ToolError::InvalidArgs(format!(
                "path {requested:?} uses .. below a folder that does not exist"
            )));
        }
        resolved.push(part);
    }
    if roots.iter().any(|root| resolved.starts_with(root)) {
        Ok(resolved)
    } else {
        Err(ToolError::InvalidArgs(format!(
            "path {requested:?} resolves to {} which is outside the allowed folders ({})",
            resolved.display(),
            roots
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )))
    }
}

fn path_arg(args: &Value) -> Result<&str, ToolError> {
    args.get("path")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::InvalidArgs("path must be a string".into()))
}

pub fn read(args: &Value, roots: &[PathBuf]) -> Result<Value, ToolError> {
    let roots = prepare_roots(roots)?;
    let path = resolve_inside(path_arg(args)?, &roots)?;
    if path.is_dir() {
        return Err(ToolError::InvalidArgs(format!(
            "{} is a folder, not a file",
            path.display()
        )));
    }
    let bytes = std::fs::read(&path).map_err(|e| io_error("cannot read", &path, e))?;
    let size = bytes.len();
    let kept = &bytes[..size.min(READ_CAP_BYTES)];
    if kept.contains(&0) {
        return Err(ToolError::InvalidArgs(format!(
            "{} is a binary file ({size} bytes); read_file returns text only",
            path.display()
        )));
    }
    // A cut may split a UTF-8 character: drop the partial tail, but refuse real non-text.
    let text = match std::str::from_utf8(kept) {
        Ok(text) => text,
        Err(e) if size > READ_CAP_BYTES && e.error_len().is_none() => {
            std::str::from_utf8(&kept[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => {
            return Err(ToolError::InvalidArgs(format!(
                "{} is not UTF-8 text ({size} bytes); read_file returns text only",
                path.display()
            )));
        }
    };
    Ok(json!({
        "path": path,
        "size_bytes": size,
        "content": text,
        "truncated": size > READ_CAP_BYTES,
    }))
}

/// A unified diff of `old` → `new` with one hunk spanning the changed lines.
pub fn unified_diff(label: &str, old: &str, new: &str) -> String {
    let old_lines: Vec<&str> = old.lines().collect();
    let new_lines: Vec<&str> = new.lines().collect();
    let prefix = old_lines
        .iter()
        .zip(&new_lines)
        .take_while(|(a, b)| a == b)
        .count();
    let suffix = old_lines[prefix..]
        .iter()
        .rev()
        .zip(new_lines[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let removed = &old_lines[prefix..old_lines.len() - suffix];
    let added = &new_lines[prefix..new_lines.len() - suffix];
    if removed.is_empty() && added.is_empty() {
        return String::new();
    }
    let start = |n: usize| if n == 0 { prefix } else { prefix + 1 };
    let mut diff = format!(
        "--- a/{label}\n+++ b/{label}\n@@ -{},{} +{},{} @@\n",
        start(removed.len()),
        removed.len(),
        start(added.len()),
        added.len()
    );
    for line in removed {
        diff.push_str(&format!("-{line}\n"));
    }
    for line in added {
        diff.push_str(&format!("+{line}\n"));
    }
    diff
}

/// A write worked out but not done: where, what, and what is there now.
struct PlannedWrite<'a> {
    path: PathBuf,
    content: &'a str,
    old: String,
    existed: bool,
}

impl PlannedWrite<'_> {
    fn diff(&self) -> String {
        let label = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        unified_diff(&label, &self.old, self.content)
    }
}

/// Every check `write_file` makes, without writing (roots are resolved, not created, so
/// a preview changes nothing).
fn plan_write<'a>(args: &'a Value, roots: &[PathBuf]) -> Result<PlannedWrite<'a>, ToolError> {
    let path = resolve_inside(path_arg(args)?, roots)?;
    let content = args
        .get("content")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::InvalidArgs("content must be a string".into()))?;
    if content.len() > WRITE_CAP_BYTES {
        return Err(ToolError::InvalidArgs(format!(
            "content is {} bytes; write_file accepts at most {WRITE_CAP_BYTES}",
            content.len()
        )));
    }
    if path.is_dir() {
        return Err(ToolError::InvalidArgs(format!(
            "{} is a folder, not a file",
            path.display()
        )));
    }
    let (old, existed) = match std::fs::read(&path) {
        Ok(bytes) => (
            String::from_utf8(bytes).map_err(|_| {
                ToolError::InvalidArgs(format!(
                    "{} is not a text file; write_file does not overwrite it",
                    path.display()
                ))
            })?,
            true,
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (String::new(), false),
        Err(e) => return Err(io_error("cannot read", &path, e)),
    };
    Ok(PlannedWrite {
        path,
        content,
        old,
        existed,
    })
}

/// What the approval dialog shows for a `write_file` call: the resolved path and the
/// diff the write would make, or why it will be refused.
pub fn write_preview(args: &Value, roots: &[PathBuf]) -> ApprovalPreview {
    // Roots that do not exist yet are shown as they will be, without creating them.
    let roots: Vec<PathBuf> = roots
        .iter()
        .map(|r| r.canonicalize().unwrap_or_else(|_| r.clone()))
        .collect();
    match plan_write(args, &roots) {
        Ok(plan) => ApprovalPreview::FileWrite {
            path: plan.path.display().to_string(),
            created: !plan.existed,
            diff: plan.diff(),
        },
        Err(e) => ApprovalPreview::Invalid {
            reason: e.to_string(),
        },
    }
}

pub fn write(args: &Value, roots: &[PathBuf]) -> Result<Value, ToolError> {
    let roots = prepare_roots(roots)?;
    let plan = plan_write(args, &roots)?;
    if let Some(parent) = plan.path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io_error("cannot create", parent, e))?;
    }
    std::fs::write(&plan.path, plan.content)
        .map_err(|e| io_error("cannot write", &plan.path, e))?;
    Ok(json!({
        "path": plan.path,
        "bytes_written": plan.content.len(),
        "created": !plan.existed,
        "diff": plan.diff(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, Vec<PathBuf>) {
        let dir = tempfile::tempdir().unwrap();
        let roots = prepare_roots(&[dir.path().join("workspace")]).unwrap();
        (dir, roots)
    }

    #[test]
    fn resolution_table() {
        let (dir, roots) = setup();
        let ws = roots[0].clone();
        std::fs::create_dir(ws.join("sub")).unwrap();
        std::fs::write(dir.path().join("secret.txt"), "s").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), ws.join("link")).unwrap();
        std::os::unix::fs::symlink(dir.path(), ws.join("outdir")).unwrap();

        let inside = [
            ("a.txt", ws.join("a.txt")),
            ("sub/b.md", ws.join("sub/b.md")),
            ("sub/../c", ws.join("c")),
            ("new/deep/d.txt", ws.join("new/deep/d.txt")),
        ];
        for (requested, want) in inside {
            assert_eq!(
                resolve_inside(requested, &roots).unwrap(),
                want,
                "{requested}"
            );
        }
        let abs = ws.join("sub/x").display().to_string();
        assert_eq!(resolve_inside(&abs, &roots).unwrap(), ws.join("sub/x"));

        let outside = [
            "../secret.txt",
            "sub/../../secret.txt",
            "link",
            "outdir/secret.txt",
            "outdir/newfile",
            "/etc/passwd",
            "missing/../../x",
            "",
        ];
        for requested in outside {
            assert!(
                resolve_inside(requested, &roots).is_err(),
                "{requested:?} was allowed"
            );
        }
    }

    #[test]
    fn more_roots_from_settings_are_allowed() {
        let (dir, _) = setup();
        let other = dir.path().join("notes");
        std::fs::create_dir(&other).unwrap();
        let unmounted = dir.path().join("unmounted");
        let roots = prepare_roots(&[
            dir.path().join("workspace"),
            unmounted.clone(),
            other.clone(),
        ])
        .unwrap();
        let p = other.canonicalize().unwrap().join("n.md");
        assert_eq!(resolve_inside(&p.display().to_string(), &roots).unwrap(), p);
        // A configured folder that does not exist is left out, not created.
        assert_eq!(roots.len(), 2);
        assert!(!unmounted.exists());
        assert!(resolve_inside(&unmounted.join("x").display().to_string(), &roots).is_err());
    }

    #[test]
    fn write_preview_shows_the_diff_and_changes_nothing() {
        let (_dir, roots) = setup();
        std::fs::write(roots[0].join("plan.md"), "a\nb\nc\n").unwrap();
        let args = json!({"path": "plan.md", "content": "a\nB\nc\n"});
        match write_preview(&args, &roots) {
            ApprovalPreview::FileWrite {
                path,
                created,
                diff,
            } => {
                assert!(path.ends_with("plan.md"), "{path}");
                assert!(!created);
                assert!(diff.contains("-b\n+B\n"), "{diff}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            std::fs::read_to_string(roots[0].join("plan.md")).unwrap(),
            "a\nb\nc\n"
        );
        match write_preview(&json!({"path": "new/n.md", "content": "x"}), &roots) {
            ApprovalPreview::FileWrite { created, diff, .. } => {
                assert!(created);
                assert!(diff.contains("+x"), "{diff}");
            }
            other => panic!("{other:?}"),
        }
        assert!(!roots[0].join("new").exists(), "a preview created a folder");
        match write_preview(&json!({"path": "../../etc/x", "content": "x"}), &roots) {
            ApprovalPreview::Invalid { reason } => {
                assert!(reason.contains("outside the allowed folders"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn read_text_caps_and_refuses_binary() {
        let (_dir, roots) = setup();
        std::fs::write(roots[0].join("t.txt"), "你好\n").unwrap();
        let out = read(&json!({"path": "t.txt"}), &roots).unwrap();
        assert_eq!(
            (out["content"].as_str(), out["truncated"].as_bool()),
            (Some("你好\n"), Some(false))
        );

        std::fs::write(roots[0].join("big.txt"), "好".repeat(READ_CAP_BYTES)).unwrap();
        let out = read(&json!({"path": "big.txt"}), &roots).unwrap();
        assert_eq!(out["truncated"], true);
        assert!(out["content"].as_str().unwrap().len() <= READ_CAP_BYTES);
        assert_eq!(out["size_bytes"], READ_CAP_BYTES * 3);

        std::fs::write(roots[0].join("b.bin"), [1, 0, 2]).unwrap();
        let err = read(&json!({"path": "b.bin"}), &roots).unwrap_err();
        assert!(err.to_string().contains("binary"), "{err}");
        std::fs::write(roots[0].join("l1.txt"), [0xe9, b'a']).unwrap();
        assert!(
            read(&json!({"path": "l1.txt"}), &roots)
                .unwrap_err()
                .to_string()
                .contains("UTF-8")
        );
        assert!(read(&json!({"path": "nope.txt"}), &roots).is_err());
    }

    #[test]
    fn write_creates_overwrites_and_reports_the_diff() {
        let (_dir, roots) = setup();
        let out = write(&json!({"path": "d/n.md", "content": "a\nb\nc\n"}), &roots).unwrap();
        assert_eq!(out["created"], true);
        assert_eq!(
            out["diff"],
            "--- a/n.md\n+++ b/n.md\n@@ -0,0 +1,3 @@\n+a\n+b\n+c\n"
        );
        let out = write(&json!({"path": "d/n.md", "content": "a\nB\nc\n"}), &roots).unwrap();
        assert_eq!(
            out["diff"],
            "--- a/n.md\n+++ b/n.md\n@@ -2,1 +2,1 @@\n-b\n+B\n"
        );
        assert_eq!(
            std::fs::read_to_string(roots[0].join("d/n.md")).unwrap(),
            "a\nB\nc\n"
        );
        let err = write(&json!({"path": "../escape.txt", "content": "x"}), &roots).unwrap_err();
        assert!(err.to_string().contains("outside"), "{err}");
        assert!(!roots[0].parent().unwrap().join("escape.txt").exists());
    }
}
