//! `exec::kill_all_running` in a process of its own: it kills every command this process
//! runs, so beside other tests it would cut theirs.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use wyckoff_tools::exec;

/// Live (non-zombie) members of the process group, read from /proc.
fn live_members(pgid: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            // pid (comm) state ppid pgrp …; comm may hold spaces, so split after ')'.
            let fields: Vec<&str> = stat
                .rsplit_once(')')
                .map(|(_, rest)| rest.split_whitespace().collect())
                .unwrap_or_default();
            fields.get(2) == Some(&pgid) && fields.first() != Some(&"Z")
        })
        .count()
}

fn group_gone(pgid_file: &Path) -> bool {
    let pgid = std::fs::read_to_string(pgid_file)
        .unwrap()
        .trim()
        .to_owned();
    // SIGKILL is delivered asynchronously; give the kernel a moment to finish.
    (0..100).any(|_| {
        let gone = live_members(&pgid) == 0;
        if !gone {
            std::thread::sleep(Duration::from_millis(20));
        }
        gone
    })
}

#[tokio::test]
async fn kill_all_running_ends_a_call_whose_future_is_never_dropped() {
    // The CLI's second Ctrl-C exits the process without dropping the call; the command's
    // group must die all the same.
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pgid");
    let command = format!(
        "echo $$ > {}; sh -c 'sleep 300' & sleep 300",
        pid_file.display()
    );
    let args = json!({ "command": command, "timeout": 100 });
    let call = exec::run(&args, dir.path(), CancellationToken::new());
    tokio::pin!(call);
    let started = async {
        while std::fs::read_to_string(&pid_file).map_or(true, |s| !s.ends_with('\n')) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::select! {
        out = &mut call => panic!("the command ended by itself: {out:?}"),
        () = started => {}
    }
    exec::kill_all_running();
    assert!(group_gone(&pid_file), "the group outlived kill_all_running");
    // The call sees its shell killed and still reports; its group is no longer listed.
    let out = call.await.unwrap();
    assert_eq!(out["status"], "failed", "{out}");
}
