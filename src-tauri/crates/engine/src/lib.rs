//! The Wyckoff engine: pure, deterministic functions over slices of daily bars.
//! No I/O and no clock here: data comes from the `market` crate, and "as of" a date means the
//! caller slices the bars up to it.

mod bar;
pub mod dates;
pub mod indicators;

pub use bar::Bar;
