//! `wyckoff analyze` with its live source unreachable: the first run finds it so (and
//! says, once, until when it will not be tried); the second run, a new process on the
//! same data home, does not contact it at all and answers from the cache without repeating
//! the notice. The source is Eastmoney pointed (WYCKOFF_EASTMONEY_URL) first at a closed
//! local port, then at a local listener that counts connections.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpListener;
use std::path::Path;
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use wyckoff_e2e::wyckoff_cli;

const SKIPPED: &str = "could not be reached recently; not tried again until";

fn analyze(home: &Path, eastmoney: &str) -> Output {
    wyckoff_cli(home)
        .env_remove("WYCKOFF_OFFLINE")
        .env("WYCKOFF_DATA_SOURCES", "eastmoney")
        .env("WYCKOFF_EASTMONEY_URL", eastmoney)
        .args(["analyze", "000001"])
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_source_found_unreachable_is_not_contacted_by_the_next_run() {
    let home = tempfile::tempdir().unwrap();
    let closed = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let first = text(&analyze(home.path(), &format!("http://127.0.0.1:{closed}")));
    assert!(first.contains("cannot connect"), "{first}");
    assert_eq!(first.matches(SKIPPED).count(), 1, "said once: {first}");
    assert!(
        first.contains("eastmoney could not be reached recently"),
        "{first}"
    );

    // The same source name now points at a listener that counts what reaches it.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = Arc::new(AtomicUsize::new(0));
    let seen = connections.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            seen.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    let second = text(&analyze(home.path(), &format!("http://127.0.0.1:{port}")));
    assert_eq!(
        connections.load(Ordering::SeqCst),
        0,
        "the second run contacted the source: {second}"
    );
    assert!(second.contains("000001"), "the cache answers: {second}");
    assert!(!second.contains(SKIPPED), "not said again: {second}");
    assert!(!second.contains("cannot connect"), "{second}");
}
