#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The app's own modules form no import circle: each file of `src/` is a node
//! (a module's `tests.rs` folds into it), each `crate::…` path an edge. The conversation
//! hub lives in `wyckoff-session`; the app's files only adapt it, so nothing here needs
//! to reach back.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `src/commands/chat.rs` → `commands::chat`; `src/commands/market/tests.rs` →
/// `commands::market`; `src/commands/mod.rs` → `commands`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "tests") {
        parts.pop();
    }
    parts.join("::")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The modules `text` names through `crate::`, as the longest known module path
/// (`crate::commands::chat::services` → `commands::chat`), grouped imports included.
fn references(text: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut paths = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        let head: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let head = head.trim_end_matches(':').to_owned();
        // `use crate::commands::{chat, market::X}`: each member under the prefix.
        let after = &rest[head.len()..];
        if let Some(group) = after.strip_prefix("::{") {
            let inner: String = group.chars().take_while(|c| *c != '}').collect();
            for member in inner.split(',') {
                let member = member.trim();
                if !member.is_empty() {
                    paths.push(format!("{head}::{member}"));
                }
            }
        }
        paths.push(head);
    }
    for path in paths {
        let parts: Vec<&str> = path.split("::").collect();
        if let Some(module) = (1..=parts.len())
            .rev()
            .map(|n| parts[..n].join("::"))
            .find(|m| modules.contains(m))
        {
            found.insert(module);
        }
    }
    found
}

fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(src, f)).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let from = module_of(src, file);
        let text = std::fs::read_to_string(file).unwrap();
        let to = references(&text, &modules);
        edges
            .entry(from.clone())
            .or_default()
            .extend(to.into_iter().filter(|m| *m != from));
    }
    edges
}

/// A cycle through `start`, if any (depth-first).
fn cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut c = path[at..].to_vec();
            c.push(node.to_owned());
            return Some(c);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    for node in edges.keys() {
        if let Some(c) = visit(node, edges, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

#[test]
fn the_apps_modules_import_each_other_in_no_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = graph(&src);
    assert!(edges.contains_key("chat") && edges.contains_key("commands::chat"));
    assert_eq!(cycle(&edges), None, "{edges:#?}");
}

#[test]
fn the_checker_finds_the_circle_the_app_once_had() {
    // chat.rs → tasks.rs → commands/chat.rs → chat.rs, as before the hub moved out.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("commands")).unwrap();
    std::fs::write(src.join("chat.rs"), "fn f() { crate::tasks::watch(); }").unwrap();
    std::fs::write(
        src.join("tasks.rs"),
        "fn g() { crate::commands::chat::deliver_notifications(); }",
    )
    .unwrap();
    std::fs::write(
        src.join("commands/chat.rs"),
        "use crate::chat::{ChannelSink, ChatState};",
    )
    .unwrap();
    std::fs::write(src.join("commands/mod.rs"), "pub mod chat;").unwrap();
    let found = cycle(&graph(src)).expect("a circle");
    assert_eq!(found.first(), found.last());
    for m in ["chat", "tasks", "commands::chat"] {
        assert!(found.iter().any(|n| n == m), "{found:?}");
    }
    // Grouped imports count: `use crate::commands::{chat}` reaches commands::chat.
    std::fs::write(src.join("tasks.rs"), "use crate::commands::{chat, other};").unwrap();
    assert!(cycle(&graph(src)).is_some());
}
