//! Source of "now", injected so decay, pruning and timestamps are testable without
//! sleeping. The workspace's one clock, so a session hands the memory stores its own.

pub use wyckoff_time::{Clock, ManualClock, SystemClock};
