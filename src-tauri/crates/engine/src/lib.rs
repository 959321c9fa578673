//! The Wyckoff engine: pure, deterministic functions over slices of daily bars.
//! No I/O here; data comes from the `market` crate.

mod bar;

pub use bar::Bar;
