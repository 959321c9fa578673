//! How the webview composites: on the GPU when the machine has one, in software otherwise.
//!
//! WebKitGTK composites with OpenGL by default. Without a GPU render node Mesa falls back
//! to llvmpipe, which rasterises on the CPU anyway and costs the web process about 100 MB
//! more than WebKit's plain software path (the `app_perf` bench, under Xvfb). So GPU
//! compositing is kept where a render node exists and turned off where none does.
//! `WYCKOFF_GPU_COMPOSITING=on|off` overrides the choice (e.g. a GPU whose driver draws
//! badly, or a remote session that exposes a render node it cannot use).

use std::path::Path;

/// The environment variable that overrides the automatic choice.
pub const OVERRIDE_VAR: &str = "WYCKOFF_GPU_COMPOSITING";

/// Where the webview composites its layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compositing {
    /// WebKit's default: accelerated compositing through OpenGL.
    Gpu,
    /// No accelerated compositing; WebKit paints on the CPU.
    Software,
}

/// What an override value asked for, or why it was not understood.
fn parse_override(value: &str) -> Result<Compositing, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "on" | "1" | "true" | "gpu" => Ok(Compositing::Gpu),
        "off" | "0" | "false" | "software" => Ok(Compositing::Software),
        other => Err(format!(
            "{OVERRIDE_VAR}={other:?} is not understood (use on or off); choosing by the hardware"
        )),
    }
}

/// The choice: an understood override wins; otherwise GPU only with a render node.
/// Returns a warning to log when the override was given but not understood.
pub fn choose(
    override_value: Option<&str>,
    has_render_node: bool,
) -> (Compositing, Option<String>) {
    let by_hardware = if has_render_node {
        Compositing::Gpu
    } else {
        Compositing::Software
    };
    match override_value.map(parse_override) {
        Some(Ok(choice)) => (choice, None),
        Some(Err(warning)) => (by_hardware, Some(warning)),
        None => (by_hardware, None),
    }
}

/// Whether `dri_dir` (normally `/dev/dri`) holds a GPU render node (`renderD128`, …).
pub fn has_render_node(dri_dir: &Path) -> bool {
    std::fs::read_dir(dri_dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("renderD"))
    })
}

/// Applies the choice to the main window's webview.
#[cfg(target_os = "linux")]
pub fn apply(window: &tauri::WebviewWindow) {
    let override_value = std::env::var(OVERRIDE_VAR).ok();
    let (choice, warning) = choose(
        override_value.as_deref(),
        has_render_node(Path::new("/dev/dri")),
    );
    if let Some(w) = warning {
        tracing::warn!("{w}");
    }
    tracing::info!(?choice, "webview compositing");
    if choice == Compositing::Gpu {
        return;
    }
    let result = window.with_webview(|webview| {
        use webkit2gtk::{HardwareAccelerationPolicy, SettingsExt, WebViewExt};
        if let Some(settings) = webview.inner().settings() {
            settings.set_hardware_acceleration_policy(HardwareAccelerationPolicy::Never);
        }
    });
    if let Err(e) = result {
        tracing::warn!("cannot set the webview's compositing: {e}");
    }
}

/// Other platforms keep the system webview's own choice.
#[cfg(not(target_os = "linux"))]
pub fn apply(_window: &tauri::WebviewWindow) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_override_wins_and_a_bad_one_falls_back_to_the_hardware() {
        use Compositing::{Gpu, Software};
        let cases: &[(Option<&str>, bool, Compositing, bool)] = &[
            (None, true, Gpu, false),
            (None, false, Software, false),
            (Some("off"), true, Software, false),
            (Some(" ON "), false, Gpu, false),
            (Some("0"), true, Software, false),
            (Some("software"), true, Software, false),
            (Some("gpu"), false, Gpu, false),
            (Some("maybe"), true, Gpu, true),
            (Some(""), false, Software, true),
        ];
        for &(value, node, want, warns) in cases {
            let (got, warning) = choose(value, node);
            assert_eq!(got, want, "{value:?} with render node {node}");
            assert_eq!(warning.is_some(), warns, "{value:?}: {warning:?}");
        }
        let (_, warning) = choose(Some("maybe"), true);
        assert!(warning.is_some_and(|w| w.contains("WYCKOFF_GPU_COMPOSITING=\"maybe\"")));
    }

    #[test]
    fn a_render_node_is_found_by_name() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!has_render_node(&dir.path().join("missing")));
        std::fs::write(dir.path().join("card0"), "").unwrap();
        assert!(
            !has_render_node(dir.path()),
            "a card node alone is not a render node"
        );
        std::fs::write(dir.path().join("renderD128"), "").unwrap();
        assert!(has_render_node(dir.path()));
    }
}
