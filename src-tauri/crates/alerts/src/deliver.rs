//! Fired alerts into the push outbox, and their delivery status from it.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Value, json};
use wyckoff_protocol::{AlertCheckReport, DeliveryStatus, FiredAlert};
use wyckoff_push::{DamagedChannel, Delivery, Outbox, OutboxStatus, PushEvent};

use tracing::Instrument;

use crate::describe::alert_text;
use crate::{AlertStore, AlertsError};
use wyckoff_market::MarketData;

/// What a channel receives for one alert: the text (with the data's date) and the alert.
pub fn message(alert: &FiredAlert) -> Value {
    json!({
        "type": "alert",
        "text": alert_text(alert),
        "data_date": alert.bar_date,
        "alert": alert,
    })
}

/// The delivery status of an alert from its outbox rows.
pub fn status_of(rows: &[OutboxStatus]) -> DeliveryStatus {
    if rows.is_empty() {
        DeliveryStatus::Recorded
    } else if rows.contains(&OutboxStatus::Failed) {
        DeliveryStatus::Failed
    } else if rows.iter().all(|s| *s == OutboxStatus::Sent) {
        DeliveryStatus::Delivered
    } else {
        DeliveryStatus::Pending
    }
}

fn push(e: wyckoff_push::PushError) -> AlertsError {
    AlertsError::Push(e.to_string())
}

/// One whole check: what it found, what was sent, and the stored push channels that could
/// not be read (they were skipped; every other channel got its alerts).
#[derive(Debug, Clone, Serialize)]
pub struct CheckRun {
    pub report: AlertCheckReport,
    pub deliveries: Vec<Delivery>,
    pub damaged_channels: Vec<DamagedChannel>,
}

/// Sends what is due in the outbox (earlier checks' rows too) and updates the delivery
/// status of the alerts concerned (and of those in `report`).
pub async fn deliver(
    store: &AlertStore,
    outbox: &Outbox,
    report: Option<&mut AlertCheckReport>,
    now: DateTime<Utc>,
) -> Result<Vec<Delivery>, AlertsError> {
    let done = outbox.deliver_due(now).await.map_err(push)?;
    let ids: BTreeSet<i64> = done.iter().filter_map(|d| d.alert_id).collect();
    let mut updated = Vec::new();
    for id in ids {
        let rows = outbox.statuses_for(id).await.map_err(push)?;
        let alert = store.fired(id).await?;
        updated.push(
            store
                .set_delivery(id, &alert.delivered_to, status_of(&rows))
                .await?,
        );
    }
    if let Some(report) = report {
        for alert in &mut report.fired {
            if let Some(u) = updated.iter().find(|u| u.id == alert.id) {
                *alert = u.clone();
            }
        }
    }
    Ok(done)
}

/// One whole check as `wyckoff alerts check` runs it: evaluate as of `as_of`, record what
/// fired and queue it for every channel taking alerts (one transaction), send what is due.
/// The report's alerts carry their delivery status after the sends.
pub async fn check_and_push(
    md: &MarketData,
    store: &AlertStore,
    outbox: &Outbox,
    as_of: Option<u32>,
    now: DateTime<Utc>,
) -> Result<CheckRun, AlertsError> {
    let (channels, damaged_channels) =
        outbox.channels_for(PushEvent::Alerts).await.map_err(push)?;
    let mut report = crate::check::check_for(md, store, &channels, as_of, now, None).await?;
    let deliveries = deliver(store, outbox, Some(&mut report), now)
        .instrument(tracing::info_span!(target: "wyckoff::stage", "deliver"))
        .await?;
    Ok(CheckRun {
        report,
        deliveries,
        damaged_channels,
    })
}

/// The check a sync runs once it has updated bars: the same as [`check_and_push`] as of
/// the latest bars, when there is anything to check (an enabled rule, or a holding with a
/// stop-loss or target); `None` when there is not.
pub async fn after_sync(
    md: &MarketData,
    store: &AlertStore,
    outbox: &Outbox,
    now: DateTime<Utc>,
) -> Result<Option<CheckRun>, AlertsError> {
    if !crate::has_work(md, store).await? {
        return Ok(None);
    }
    check_and_push(md, store, outbox, None, now).await.map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_alert_is_delivered_when_every_channel_has_it_and_failed_when_one_refused() {
        use OutboxStatus::{Failed, Pending, Sent};
        let table: [(&[OutboxStatus], DeliveryStatus); 6] = [
            (&[], DeliveryStatus::Recorded),
            (&[Sent], DeliveryStatus::Delivered),
            (&[Sent, Sent], DeliveryStatus::Delivered),
            (&[Sent, Pending], DeliveryStatus::Pending),
            (&[Pending], DeliveryStatus::Pending),
            (&[Sent, Failed, Pending], DeliveryStatus::Failed),
        ];
        for (rows, want) in table {
            assert_eq!(status_of(rows), want, "{rows:?}");
        }
    }
}
