//! Per-layer progress: a screen tells its observer about each layer as
//! soon as that layer is counted — L1 … L5 in order, with the counts the result carries —
//! and before the next layer runs (seen by cancelling right after a layer is reported).
#![allow(clippy::expect_used, clippy::unwrap_used)] // test helpers outside #[test] fns

mod common;

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use common::real_universe;
use wyckoff_engine::funnel::{LayerCount, LayerObserver};
use wyckoff_engine::{Funnel, FunnelConfig, FunnelError, Never, ScreenArgs};

#[derive(Default)]
struct Recorder(Mutex<Vec<(u8, LayerCount)>>);

impl LayerObserver for Recorder {
    fn layer_done(&self, number: u8, layer: &LayerCount) {
        self.0.lock().unwrap().push((number, layer.clone()));
    }
}

#[test]
fn each_layer_is_reported_in_order_with_the_results_counts() {
    let u = real_universe();
    let f = Funnel::prepare(&u, &FunnelConfig::default());
    let args = ScreenArgs::default();
    let seen = Recorder::default();
    let observed = f.screen_observed(&args, &Never, &seen).unwrap();
    assert_eq!(
        observed,
        f.screen(&args).unwrap(),
        "observing changes nothing"
    );
    let seen = seen.0.into_inner().unwrap();
    let numbers: Vec<u8> = seen.iter().map(|(n, _)| *n).collect();
    assert_eq!(numbers, [1, 2, 3, 4, 5]);
    let names: Vec<&str> = seen.iter().map(|(_, l)| l.layer.as_str()).collect();
    assert_eq!(names, ["L1", "L2", "L3", "L4", "L5"]);
    let reported: Vec<LayerCount> = seen.into_iter().map(|(_, l)| l).collect();
    assert_eq!(reported, observed.layers);
}

#[test]
fn a_layer_is_reported_before_the_next_one_runs() {
    let u = real_universe();
    let f = Funnel::prepare(&u, &FunnelConfig::default());
    // Stop as soon as L2 has been reported: L3 must never be counted.
    let stop = AtomicBool::new(false);
    let seen = Recorder::default();
    let observer = |number: u8, layer: &LayerCount| {
        seen.layer_done(number, layer);
        if number == 2 {
            stop.store(true, Ordering::SeqCst);
        }
    };
    let outcome = f.screen_observed(&ScreenArgs::default(), &stop, &observer);
    assert!(
        matches!(outcome, Err(FunnelError::Cancelled)),
        "{outcome:?}"
    );
    let numbers: Vec<u8> = seen.0.lock().unwrap().iter().map(|(n, _)| *n).collect();
    assert_eq!(numbers, [1, 2]);
}
