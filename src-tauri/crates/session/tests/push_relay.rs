#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The push relay as the services wire it: an approval queued in the inbox (through the
//! store every approver shares) lands in the outbox for the channels that take approvals
//! and for no other.

use std::sync::Arc;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use serde_json::json;
use wyckoff_config::secrets::MemoryBackend;
use wyckoff_config::{DataHome, Secrets, Settings};
use wyckoff_inbox::NewRequest;
use wyckoff_push::{ChannelKind, Outbox, PushEvent};
use wyckoff_session::Services;

#[tokio::test]
async fn an_approval_waiting_is_queued_for_the_channels_that_take_approvals() {
    let home = tempfile::tempdir().unwrap();
    let settings = Settings {
        data_sources: Vec::new(),
        ..Settings::default()
    };
    let secrets = Secrets::with_backend(Box::new(MemoryBackend::default()), Box::new(|_| None));
    let services = Services::open(DataHome::new(home.path()), settings, Arc::new(secrets))
        .await
        .unwrap();
    let outbox = Outbox::new(services.pool().clone(), Duration::from_secs(1))
        .await
        .unwrap();
    let now = Utc.with_ymd_and_hms(2026, 12, 5, 7, 0, 0).unwrap();
    // Nothing listens on port 9: a send is retried later, the row stays.
    for name in ["phone", "desk"] {
        outbox
            .add_channel(
                name,
                ChannelKind::Webhook,
                Some("http://127.0.0.1:9/h"),
                true,
                None,
                now,
            )
            .await
            .unwrap();
    }
    outbox
        .set_events("phone", vec![PushEvent::Alerts, PushEvent::Approvals])
        .await
        .unwrap();
    let queued = services
        .inbox()
        .queue(
            NewRequest {
                conversation_id: "c1".into(),
                call_id: "call_1".into(),
                tool: "update_portfolio".into(),
                display_name: "修改持仓".into(),
                args: json!({"action": "remove", "code": "600519"}),
                preview: None,
                requested_by: "schedule:close".into(),
            },
            now,
            Duration::from_secs(3600),
        )
        .await
        .unwrap();
    let rows = outbox.rows().await.unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    assert_eq!((row.channel.as_str(), row.alert_id), ("phone", None));
    assert_eq!(row.body["type"], "approval");
    assert_eq!(row.body["approval"]["id"], queued.id.as_str());
    let text = row.body["text"].as_str().unwrap();
    assert!(
        text.contains("修改持仓 (update_portfolio), asked by schedule:close"),
        "{text}"
    );
    assert!(
        !text.contains("600519"),
        "the call's arguments stay at the desk: {text}"
    );
}
