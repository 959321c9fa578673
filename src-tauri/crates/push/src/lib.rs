//! Push channels and the durable outbox (issue 25 item 3).
//!
//! A message to push is first written to the outbox in `wyckoff.db` (migration 7100), one
//! row per channel; [`Outbox::deliver_due`] then sends every row that is due. A send that
//! times out, cannot connect or gets a 5xx (or 408/429) is retried with backoff
//! ([`policy`]), so nothing is lost when the process stops; any other 4xx is a permanent
//! failure kept with the channel's answer. Only the generic webhook (JSON POST) exists so
//! far; its URL must be http(s) and may point at a private or loopback address only when
//! the channel allows it (the `web_fetch` rule).

pub mod policy;
mod store;
mod target;

pub use store::{
    Channel, ChannelKind, Delivery, Outbox, OutboxRow, OutboxStatus, PushError, TestOutcome,
};
pub use target::{UrlError, check_url};
