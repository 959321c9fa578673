//! Shared helpers for the end-to-end tests in `tests/`.
#![allow(clippy::expect_used)] // test support code: failing loudly is the point

use std::path::PathBuf;

/// Cargo's target directory (honours `CARGO_TARGET_DIR`).
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .expect("workspace root")
                .join("target")
        })
}

/// A debug binary of this workspace, which must have been built already
/// (`scripts/test` builds every binary before the tests run).
pub fn binary(name: &str) -> PathBuf {
    let bin = target_dir()
        .join("debug")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "{} is missing: build it first (cargo build --workspace --bins)",
        bin.display()
    );
    bin
}

/// TCP ports that were free a moment ago (held together while picking, so they differ).
/// Each WebDriver test starts its own tauri-driver on them, so concurrent runs on one
/// machine never reach each other's app.
pub fn free_ports<const N: usize>() -> [u16; N] {
    let listeners: Vec<std::net::TcpListener> = (0..N)
        .map(|_| std::net::TcpListener::bind(("127.0.0.1", 0)).expect("bind an ephemeral port"))
        .collect();
    std::array::from_fn(|i| listeners[i].local_addr().expect("bound address").port())
}
