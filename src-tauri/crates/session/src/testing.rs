//! Test scaffolding for the front ends' tests and benchmarks, built only with the
//! `testing` feature (never shipped): a desk on a temporary data home that fetches
//! nothing, and the market's local Eastmoney server (the front ends reach the core only
//! through the session, their tests too).

use std::path::Path;
use std::sync::Arc;

use wyckoff_config::SharedSettings;
use wyckoff_config::secrets::MemoryBackend;
use wyckoff_config::settings::Settings;
use wyckoff_config::{DataHome, Secrets};

/// A local server answering as Eastmoney does, the source pointed at it and the day the
/// sync tests run on.
pub use wyckoff_market::test_support as eastmoney;

use crate::{Desk, DeskOptions, SessionError};

/// The desk of `dir` with the bundled bars only: no keychain (secrets in memory), and no
/// source to fetch from (the settings list none).
pub async fn offline_desk(dir: &Path) -> Result<Arc<Desk>, SessionError> {
    let mut options = DeskOptions::new(DataHome::new(dir));
    options.settings = Some(SharedSettings::new(Settings {
        data_sources: Vec::new(),
        ..Settings::default()
    }));
    options.secrets = Arc::new(Secrets::with_backend(
        Box::new(MemoryBackend::default()),
        Box::new(|_| None),
    ));
    Desk::open(options).await
}
