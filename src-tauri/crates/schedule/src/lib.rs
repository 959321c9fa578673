//! Schedules on the trading calendar: when a schedule is due ([`when`]) and the
//! stored schedules with their runs ([`store`]). Running them is `wyckoff-session`'s: a
//! schedule runs through the same hub as a typed message.

pub mod store;
pub mod when;

pub use store::{DamagedSchedule, Job, Listing, Schedule, ScheduleRun, ScheduleStore, StoreError};
pub use when::{Days, Occurrence, When, WhenError};
