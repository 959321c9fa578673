//! Injected time, so staleness, backoff and the circuit breaker are tested without
//! sleeping. The workspace's one clock (its `now_beijing` is the exchange's wall clock);
//! re-exported so `wyckoff_market::clock::…` paths keep naming it.

pub use wyckoff_time::{Clock, ManualClock, SystemClock};
