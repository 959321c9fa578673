//! Injected time, so deadlines (approval timeouts, tool timeouts) and timestamps can be
//! tested without sleeping. The clock is the workspace's one clock; re-exported here so
//! `wyckoff_agent::Clock` and `wyckoff_agent::clock::…` keep naming it.

pub use wyckoff_time::{Clock, ManualClock, SystemClock};
