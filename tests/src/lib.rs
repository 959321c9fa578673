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
