//! A desk on a temporary data home with no live source, for the commands' tests: the
//! commands ask the desk for the work, so their tests open one as the app does.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use wyckoff_config::SharedSettings;
use wyckoff_config::secrets::MemoryBackend;
use wyckoff_config::settings::Settings;
use wyckoff_config::{DataHome, Secrets};
use wyckoff_session::{Desk, DeskOptions};

/// The desk of `dir` with the bundled bars only: no keychain, and no source to fetch
/// from (the settings list none).
pub(crate) async fn offline(dir: &Path) -> Arc<Desk> {
    let mut options = DeskOptions::new(DataHome::new(dir));
    options.settings = Some(SharedSettings::new(Settings {
        data_sources: Vec::new(),
        ..Settings::default()
    }));
    options.secrets = Arc::new(Secrets::with_backend(
        Box::new(MemoryBackend::default()),
        Box::new(|_| None),
    ));
    Desk::open(options).await.unwrap()
}
