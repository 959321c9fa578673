//! Push channels and the durable outbox.
//!
//! A message to push is first written to the outbox in `wyckoff.db` (migration 7100), one
//! row per channel; [`Outbox::deliver_due`] then sends every row that is due. A send that
//! times out, cannot connect or gets a 5xx (or 408/429) is retried with backoff
//! ([`policy`]), so nothing is lost when the process stops; any other 4xx is a permanent
//! failure kept with the channel's answer (a robot's non-zero `errcode` in a 200 too).
//! Channels: a generic webhook (the message JSON), WeCom / DingTalk / Feishu robots and
//! Telegram bots in their own formats ([`render`]); a text longer than a channel takes is
//! split into numbered parts, never cut. Tokens and signing secrets come from
//! [`ChannelSecrets`] (the keychain), never from the database. URLs must be http(s) and may
//! point at a private or loopback address only when the channel allows it. Each channel says
//! which [`PushEvent`]s it is sent (alerts by default; finished tasks, finished schedule
//! runs and approvals waiting in the inbox when asked for).

pub mod email;
pub mod events;
mod keychain;
pub mod policy;
pub mod render;
mod secret;
mod store;
mod target;

pub use email::EmailSettings;
pub use events::{EventsError, PushEvent, parse_events};
pub use keychain::KeychainSecrets;
pub use secret::{SecretIn, mask, split_pasted, valid_header};
pub use store::{
    ANSWER_BYTES, Channel, ChannelKind, ChannelSecrets, DELIVERY_HEADER, DamagedChannel, Delivery,
    NoSecrets, Outbox, OutboxRow, OutboxStatus, PushError, TestOutcome,
};
pub use target::{UrlError, check_url};
