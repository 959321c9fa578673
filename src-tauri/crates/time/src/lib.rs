//! Time for every crate: the injected [`Clock`] (so timeouts, staleness and timestamps are
//! tested without sleeping), Beijing wall-clock time (the exchange's and the user's), and
//! trading dates as `u32` `YYYYMMDD`. One copy of each, so the crates cannot disagree.

pub mod beijing;
pub mod clock;
pub mod date;

pub use beijing::{BEIJING_OFFSET_SECS, beijing_date, from_beijing, to_beijing};
pub use clock::{Clock, ManualClock, ShiftedClock, SystemClock, parse_instant};
pub use date::{from_yyyymmdd, is_valid_yyyymmdd, iso, parse_date, to_yyyymmdd};
