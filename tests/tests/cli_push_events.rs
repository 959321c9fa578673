//! Per-channel push events end to end: a channel added with `--events tasks,schedules`
//! receives the finished background task and the finished schedule run when
//! `wyckoff daemon --once` runs a due screen schedule; a channel left at the default
//! (alerts) receives nothing. Bad event names are refused with nothing stored. Local
//! webhooks stand in for the channels. Build the binary first (`cargo build -p wyckoff-cli`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use wyckoff_e2e::hook::hook;
use wyckoff_e2e::show;

type Home = wyckoff_e2e::CliHome;

#[test]
fn a_channel_taking_tasks_gets_the_finished_task_and_one_without_gets_nothing() {
    let home = Home::new();
    let ops = hook(vec![]);
    let desk = hook(vec![]);
    let ch = home.json(&[
        "push",
        "add",
        "ops",
        "--kind",
        "webhook",
        "--url",
        &ops.url,
        "--allow-private",
        "--events",
        "schedules,TASKS",
        "--json",
    ]);
    assert_eq!(ch["events"], json!(["tasks", "schedules"]));
    let ch = home.json(&[
        "push",
        "add",
        "desk",
        "--kind",
        "webhook",
        "--url",
        &desk.url,
        "--allow-private",
        "--json",
    ]);
    assert_eq!(ch["events"], json!(["alerts"]), "alerts by default");

    // An unknown event or none: exit 2, nothing stored or changed.
    for args in [
        &[
            "push",
            "add",
            "x",
            "--kind",
            "webhook",
            "--url",
            "https://example.com/h",
            "--events",
            "alerts,trades",
        ][..],
        &[
            "push",
            "add",
            "x",
            "--kind",
            "webhook",
            "--url",
            "https://example.com/h",
            "--events",
            "",
        ][..],
        &["push", "events", "desk", "everything"][..],
    ] {
        let out = home.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", show(&out));
    }
    let listed = home.json(&["push", "list", "--json"]);
    let names: Vec<(&str, &Value)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), &c["events"]))
        .collect();
    assert_eq!(
        names,
        vec![
            ("desk", &json!(["alerts"])),
            ("ops", &json!(["tasks", "schedules"]))
        ]
    );

    // A close screen due at 15:05 on Friday 2026-12-04, run by one daemon pass.
    let add = home.run(&[
        "schedule",
        "add",
        "close",
        "--at",
        "15:05",
        "--job",
        "screen",
        "--now",
        "2026-12-03 16:00",
    ]);
    assert_eq!(add.status.code(), Some(0), "{}", show(&add));
    let pass = home.run(&["daemon", "--once", "--json", "--now", "2026-12-04 15:10"]);
    assert_eq!(pass.status.code(), Some(0), "{}", show(&pass));
    let run: Value = serde_json::from_slice(
        String::from_utf8_lossy(&pass.stdout)
            .lines()
            .next()
            .unwrap()
            .as_bytes(),
    )
    .unwrap();
    assert_eq!(run["status"], "done", "{run}");
    let task_id = run["task_id"].as_str().unwrap();

    let got = ops.bodies();
    assert_eq!(got.len(), 2, "{got:?}");
    let task = got.iter().find(|b| b["type"] == "task").unwrap();
    assert_eq!(task["task"]["task_id"], task_id);
    assert_eq!(task["task"]["tool_name"], "screen_stocks");
    assert_eq!(task["task"]["status"], "completed");
    let text = task["text"].as_str().unwrap();
    assert!(
        text.contains(task_id) && text.contains("完成 / done"),
        "{text}"
    );
    let schedule = got.iter().find(|b| b["type"] == "schedule").unwrap();
    assert_eq!(
        (
            &schedule["schedule"]["name"],
            &schedule["schedule"]["status"]
        ),
        (&json!("close"), &json!("done"))
    );
    assert_eq!(schedule["schedule"]["occurrence"], "2026-12-04 15:05");
    assert!(
        schedule["text"]
            .as_str()
            .unwrap()
            .starts_with("定时任务 close done (due 2026-12-04 15:05 Beijing"),
        "{schedule}"
    );
    // The alerts-only channel heard nothing of it.
    assert!(desk.bodies().is_empty(), "{:?}", desk.bodies());

    // Every row went out: nothing left for a later pass.
    let outbox = home.json(&["push", "outbox", "--json"]);
    let rows = outbox.as_array().unwrap();
    assert_eq!(rows.len(), 2, "{outbox}");
    assert!(
        rows.iter()
            .all(|r| r["channel"] == "ops" && r["status"] == "sent"),
        "{outbox}"
    );

    // Set to alerts only, the channel hears no more of the next run.
    let ch = home.json(&["push", "events", "ops", "alerts", "--json"]);
    assert_eq!(ch["events"], json!(["alerts"]));
    let pass = home.run(&["daemon", "--once", "--json", "--now", "2026-12-07 15:10"]);
    assert_eq!(pass.status.code(), Some(0), "{}", show(&pass));
    assert_eq!(ops.bodies().len(), 2);
}
