//! Helpers shared by the integration tests.
#![allow(dead_code)]

/// Fails when a Debug dump contains a NaN or an infinity. serde_json would silently turn those
/// into `null`, so the check runs on the Debug form, which prints them as `NaN` / `inf`.
pub fn assert_all_finite(what: &str, dump: &str) {
    assert!(!dump.contains("NaN"), "{what}: NaN in output:\n{dump}");
    let b = dump.as_bytes();
    for (i, _) in dump.match_indices("inf") {
        let before = if i == 0 { b' ' } else { b[i - 1] };
        let after = b.get(i + 3).copied().unwrap_or(b' ');
        let standalone = matches!(before, b' ' | b'(' | b'-' | b'[' | b':')
            && matches!(after, b',' | b')' | b']' | b' ' | b'\n');
        assert!(!standalone, "{what}: infinity in output:\n{dump}");
    }
}
