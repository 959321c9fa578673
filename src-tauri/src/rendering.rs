//! How the webview composites: WebKitGTK's default (OpenGL) unless the user asks for
//! software painting with `WYCKOFF_GPU_COMPOSITING=off`.
//!
//! Where GL is Mesa's CPU rasteriser (llvmpipe: no GPU, a VM, a remote session), software
//! painting saves the web process about 90 MB (the `app_perf` bench under Xvfb: 297 →
//! 204 MB RSS). It is not the automatic choice for machines without a render node
//! because WebKit's automation cannot take a screenshot in that mode, so the WebDriver
//! suite could not cover what those users would see.

/// The environment variable that chooses software painting (`off`) or GL (`on`).
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
            "{OVERRIDE_VAR}={other:?} is not understood (use on or off); keeping GPU compositing"
        )),
    }
}

/// The choice: an understood override, else WebKit's default. Returns a warning to log
/// when the override was given but not understood.
pub fn choose(override_value: Option<&str>) -> (Compositing, Option<String>) {
    match override_value.map(parse_override) {
        Some(Ok(choice)) => (choice, None),
        Some(Err(warning)) => (Compositing::Gpu, Some(warning)),
        None => (Compositing::Gpu, None),
    }
}

/// Applies the choice to the main window's webview.
#[cfg(target_os = "linux")]
pub fn apply(window: &tauri::WebviewWindow) {
    let override_value = std::env::var(OVERRIDE_VAR).ok();
    let (choice, warning) = choose(override_value.as_deref());
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
    fn only_an_understood_override_leaves_the_default() {
        use Compositing::{Gpu, Software};
        let cases: &[(Option<&str>, Compositing, bool)] = &[
            (None, Gpu, false),
            (Some("off"), Software, false),
            (Some(" OFF "), Software, false),
            (Some("0"), Software, false),
            (Some("software"), Software, false),
            (Some("on"), Gpu, false),
            (Some("gpu"), Gpu, false),
            (Some("maybe"), Gpu, true),
            (Some(""), Gpu, true),
        ];
        for &(value, want, warns) in cases {
            let (got, warning) = choose(value);
            assert_eq!(got, want, "{value:?}");
            assert_eq!(warning.is_some(), warns, "{value:?}: {warning:?}");
        }
        let (_, warning) = choose(Some("maybe"));
        assert!(warning.is_some_and(|w| w.contains("WYCKOFF_GPU_COMPOSITING=\"maybe\"")));
    }
}
