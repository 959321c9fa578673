//! Logging: a daily-rolling file under `$WYCKOFF_HOME/logs`, an optional console layer,
//! and redaction of anything shaped like a key before it reaches either.

use std::io::Write;
use std::path::Path;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use crate::redact::redact_secrets;
use crate::timings::StageTimings;

/// Log files kept before the oldest is deleted.
const MAX_LOG_FILES: usize = 14;

/// A writer that masks secrets in every formatted log line before passing it on.
pub struct Redacting<W>(W);

impl<W: Write> Write for Redacting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // fmt layers write one whole event per call, so each call is a complete line.
        let text = String::from_utf8_lossy(buf);
        self.0.write_all(redact_secrets(&text).as_bytes())?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Wraps a `MakeWriter` so everything it writes is redacted.
pub struct RedactingMakeWriter<M>(pub M);

impl<'a, M: MakeWriter<'a>> MakeWriter<'a> for RedactingMakeWriter<M> {
    type Writer = Redacting<M::Writer>;
    fn make_writer(&'a self) -> Self::Writer {
        Redacting(self.0.make_writer())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LoggingError {
    #[error("cannot create the log directory {0}: {1}")]
    Dir(String, std::io::Error),
    #[error("cannot open the log file: {0}")]
    File(String),
    #[error("a global logger is already installed")]
    AlreadyInstalled,
}

/// Installs the global subscriber. Keep the returned guard alive for the life of the
/// process: dropping it flushes and stops the file writer.
///
/// `RUST_LOG` overrides the default level (`info`).
pub fn init(
    logs_dir: &Path,
    file_prefix: &str,
    console: bool,
) -> Result<WorkerGuard, LoggingError> {
    init_with_timings(logs_dir, file_prefix, console, None)
}

/// [`init`], also recording stage timings when `timings` is given.
pub fn init_with_timings(
    logs_dir: &Path,
    file_prefix: &str,
    console: bool,
    timings: Option<&StageTimings>,
) -> Result<WorkerGuard, LoggingError> {
    std::fs::create_dir_all(logs_dir)
        .map_err(|e| LoggingError::Dir(logs_dir.display().to_string(), e))?;
    let appender = RollingFileAppender::builder()
        .rotation(Rotation::DAILY)
        .filename_prefix(file_prefix)
        .filename_suffix("log")
        .max_log_files(MAX_LOG_FILES)
        .build(logs_dir)
        .map_err(|e| LoggingError::File(e.to_string()))?;
    let (file_writer, guard) = tracing_appender::non_blocking(appender);
    let filter = || EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));

    let file_layer = tracing_subscriber::fmt::layer()
        .with_ansi(false)
        .with_writer(RedactingMakeWriter(file_writer))
        .with_filter(filter());
    let console_layer = console.then(|| {
        tracing_subscriber::fmt::layer()
            .with_writer(RedactingMakeWriter(std::io::stderr))
            .with_filter(filter())
    });
    tracing_subscriber::registry()
        .with(file_layer)
        .with(console_layer)
        .with(timings.map(StageTimings::layer))
        .try_init()
        .map_err(|_| LoggingError::AlreadyInstalled)?;
    Ok(guard)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);
    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    impl<'a> MakeWriter<'a> for Sink {
        type Writer = Sink;
        fn make_writer(&'a self) -> Sink {
            self.clone()
        }
    }

    #[test]
    fn log_lines_are_redacted() {
        let sink = Sink::default();
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_writer(RedactingMakeWriter(sink.clone()))
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!(
                header = "Bearer abcdefghijkl123",
                "calling with key sk-canary-0123456789"
            );
        });
        let out = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        assert!(out.contains("calling with key sk-***"), "{out}");
        assert!(!out.contains("canary"), "{out}");
        assert!(!out.contains("abcdefghijkl123"), "{out}");
    }

    #[test]
    fn init_writes_a_redacted_file() {
        let dir = tempfile::tempdir().unwrap();
        let guard = init(dir.path(), "test", false).unwrap();
        tracing::warn!("token=supersecretvalue and sk-filecanary123456");
        drop(guard);
        let mut text = String::new();
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            text.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
        }
        assert!(text.contains("token=***"), "{text}");
        assert!(
            !text.contains("supersecretvalue") && !text.contains("filecanary"),
            "{text}"
        );
    }
}
