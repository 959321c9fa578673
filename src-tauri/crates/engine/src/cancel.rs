//! Cooperative cancellation of long engine work (a whole-market screen, a backtest).
//!
//! The engine stays pure: it does not know about threads, tokens or runtimes. A caller that
//! may want to stop passes something it can ask, "stop now?"; the long loops ask between
//! units of work (each simulated day, each funnel layer, each chunk of stocks) and return
//! [`Cancelled`] at the first yes. An `AtomicBool` the caller sets from another thread is
//! the usual answer; tests pass a closure. [`Never`] keeps the plain entry points as they
//! were.

use std::sync::atomic::{AtomicBool, Ordering};

/// Asked between units of work; `true` means stop as soon as possible. Once it has said
/// `true` it keeps saying so (a cancel is not taken back): work that stopped part-way is
/// always reported as [`Cancelled`], never returned.
pub trait Cancel: Sync {
    fn is_cancelled(&self) -> bool;
}

impl Cancel for AtomicBool {
    fn is_cancelled(&self) -> bool {
        self.load(Ordering::Relaxed)
    }
}

impl<F: Fn() -> bool + Sync> Cancel for F {
    fn is_cancelled(&self) -> bool {
        self()
    }
}

/// Never cancels: the plain, uncancellable entry points.
#[derive(Debug, Clone, Copy, Default)]
pub struct Never;

impl Cancel for Never {
    fn is_cancelled(&self) -> bool {
        false
    }
}

/// The work stopped because its caller cancelled it; nothing was computed to the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("已取消")]
pub struct Cancelled;

/// `Err(Cancelled)` once `cancel` says stop.
pub fn check(cancel: &dyn Cancel) -> Result<(), Cancelled> {
    if cancel.is_cancelled() {
        Err(Cancelled)
    } else {
        Ok(())
    }
}

/// Stocks handled between two checks in the per-stock phases (a few milliseconds of work on
/// the full market, so a cancel is seen quickly, and enough per chunk to keep every core busy).
pub(crate) const STOCK_CHUNK: usize = 256;
