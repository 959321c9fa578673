//! A desk on a temporary data home with no live source, for the commands' tests: the
//! commands ask the desk for the work, so their tests open one as the app does.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use wyckoff_session::Desk;

/// The desk of `dir` with the bundled bars only ([`wyckoff_session::testing::offline_desk`]).
pub(crate) async fn offline(dir: &Path) -> Arc<Desk> {
    wyckoff_session::testing::offline_desk(dir).await.unwrap()
}
