//! Chat bots, a front end of the desk like the CLI and the app: a platform's wire format
//! ([`telegram`], [`dingtalk`], [`feishu`], [`wecom`]) and the HTTP calls Feishu and
//! DingTalk share ([`open_api`]), what a message asks for ([`command`]), how an answer is
//! shown ([`format`]) and the serve loops ([`serve`]: the long connections reconnect
//! through one loop, `serve::reconnecting`). Everything that decides or stores —
//! pairing, limits, conversations, approvals, the audit log — is the desk's
//! (`wyckoff_session::desk_bots`).

pub mod chart_image;
pub mod command;
pub mod dingtalk;
pub mod feishu;
pub mod format;
pub mod open_api;
pub mod serve;
pub mod serve_feishu;
pub mod serve_stream;
pub mod serve_wecom;
pub mod telegram;
pub mod watch;
pub mod wecom;
pub mod ws_connect;

pub use serve::{ServeError, ServeOptions, serve_all, test};
pub use watch::{WatchTiming, serve_watching};
