//! Stage timings: where a command's time goes, for a user (`WYCKOFF_TIMINGS=1` or
//! `wyckoff --timings`) and for the benchmark script, which reads the same lines.
//!
//! Libraries mark a stage with a span on [`STAGE_TARGET`] named after it
//! (`tracing::info_span!(target: "wyckoff::stage", "read")`); nothing is measured unless
//! a front end installed [`StageTimings::layer`], and without any subscriber such a span
//! costs one relaxed load.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tracing::Subscriber;
use tracing::span::{Attributes, Id};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{FilterFn, Filtered};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

/// The target of every stage span.
pub const STAGE_TARGET: &str = "wyckoff::stage";

/// The environment switch that turns the timings on.
pub const TIMINGS_ENV: &str = "WYCKOFF_TIMINGS";

/// Whether the environment asks for timings (`WYCKOFF_TIMINGS` set to anything but
/// empty, `0` or `false`).
pub fn requested_by_env() -> bool {
    std::env::var(TIMINGS_ENV).is_ok_and(|v| switch_on(&v))
}

fn switch_on(value: &str) -> bool {
    !matches!(value.trim(), "" | "0" | "false")
}

/// One finished stage: when it started after the command's origin and how long it took.
#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    pub name: String,
    pub started: Duration,
    pub took: Duration,
}

/// The stages one process recorded, measured from its origin (the start of `main`).
#[derive(Debug, Clone)]
pub struct StageTimings {
    origin: Instant,
    stages: Arc<Mutex<Vec<Stage>>>,
}

impl StageTimings {
    pub fn new(origin: Instant) -> Self {
        Self {
            origin,
            stages: Arc::default(),
        }
    }

    /// Records a stage measured by the caller (one that runs before any subscriber
    /// exists, such as parsing the command line).
    pub fn record(&self, name: &str, started: Instant, took: Duration) {
        let stage = Stage {
            name: name.to_string(),
            started: started.saturating_duration_since(self.origin),
            took,
        };
        self.stages
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(stage);
    }

    /// The finished stages in the order they started.
    pub fn stages(&self) -> Vec<Stage> {
        let mut stages = self
            .stages
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        stages.sort_by_key(|s| s.started);
        stages
    }

    /// A layer that records every closed stage span; add it to the process' subscriber.
    pub fn layer<S>(&self) -> Filtered<StageLayer, FilterFn, S>
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        let only_stages: FilterFn = FilterFn::new(|meta| meta.target() == STAGE_TARGET);
        StageLayer(self.clone()).with_filter(only_stages)
    }

    /// Makes these timings the process' only subscriber (for a command that writes no
    /// log); false when another subscriber was installed first.
    pub fn install_alone(&self) -> bool {
        use tracing_subscriber::layer::SubscriberExt;
        use tracing_subscriber::util::SubscriberInitExt;
        tracing_subscriber::registry()
            .with(self.layer())
            .try_init()
            .is_ok()
    }

    /// The report: one line a stage in start order, then the total since the origin.
    /// Stages that ran inside another are indented under it.
    pub fn report(&self) -> String {
        format_report(&self.stages(), self.origin.elapsed())
    }
}

/// Formats stages as `timing <stage> <ms> ms` lines; a stage that started and ended
/// within the one above it is indented by two spaces a level.
pub fn format_report(stages: &[Stage], total: Duration) -> String {
    let mut out = String::new();
    let mut open: Vec<Duration> = Vec::new();
    for s in stages {
        open.retain(|end| *end >= s.started + s.took);
        let indent = "  ".repeat(open.len());
        let label = format!("{indent}{}", s.name);
        out.push_str(&format!("timing {label:<16} {:>9.1} ms\n", ms(s.took)));
        open.push(s.started + s.took);
    }
    out.push_str(&format!("timing {:<16} {:>9.1} ms\n", "total", ms(total)));
    out
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// When a stage span was created.
struct Opened(Instant);

/// Records each stage span's wall time when it closes.
pub struct StageLayer(StageTimings);

impl<S> Layer<S> for StageLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, _attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Opened(Instant::now()));
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some(opened) = span.extensions().get::<Opened>().map(|o| o.0) else {
            return;
        };
        self.0.record(span.name(), opened, opened.elapsed());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing_subscriber::layer::SubscriberExt;

    #[test]
    fn stage_spans_are_recorded_and_other_spans_are_not() {
        let timings = StageTimings::new(Instant::now());
        let subscriber = tracing_subscriber::registry().with(timings.layer());
        tracing::subscriber::with_default(subscriber, || {
            tracing::info_span!(target: "wyckoff::stage", "open").in_scope(|| {
                tracing::info_span!(target: "wyckoff::stage", "migrate").in_scope(|| {});
            });
            tracing::info_span!("not a stage").in_scope(|| {});
            tracing::info_span!(target: "wyckoff::stage", "read").in_scope(|| {});
        });
        let names: Vec<String> = timings.stages().into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["open", "migrate", "read"]);
        let report = timings.report();
        assert!(report.contains("timing open "), "{report}");
        assert!(report.contains("timing   migrate "), "{report}");
        assert!(report.contains("timing read "), "{report}");
        assert!(report.lines().last().unwrap().starts_with("timing total"));
    }

    #[test]
    fn nesting_follows_the_intervals() {
        let d = Duration::from_millis;
        let stages = [
            Stage {
                name: "open".into(),
                started: d(0),
                took: d(10),
            },
            Stage {
                name: "migrate".into(),
                started: d(2),
                took: d(5),
            },
            Stage {
                name: "read".into(),
                started: d(10),
                took: d(20),
            },
        ];
        let report = format_report(&stages, d(31));
        let lines: Vec<&str> = report.lines().collect();
        assert_eq!(lines[0], "timing open                  10.0 ms");
        assert_eq!(lines[1], "timing   migrate              5.0 ms");
        assert_eq!(lines[2], "timing read                  20.0 ms");
        assert_eq!(lines[3], "timing total                 31.0 ms");
    }

    #[test]
    fn the_switch_reads_the_environment_words() {
        for (value, on) in [
            ("1", true),
            ("yes", true),
            ("0", false),
            ("false", false),
            (" ", false),
            ("", false),
        ] {
            assert_eq!(switch_on(value), on, "{value:?}");
        }
    }
}
