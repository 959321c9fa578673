//! Rules and fired alerts in `wyckoff.db` (migration 7000).

use std::collections::HashMap;

use chrono::{DateTime, SecondsFormat, Utc};
use sqlx::SqlitePool;
use wyckoff_protocol::{
    AlertCondition, AlertFigures, AlertRule, AlertTarget, DeliveryStatus, FiredAlert,
};

use wyckoff_push::{Channel, Outbox};
use wyckoff_time::iso;

use crate::NewRule;
use crate::deliver::message;

/// Alerts written by one INSERT: 11 values a row, within SQLite's 32,766 bound values.
const FIRED_ROWS_A_STATEMENT: usize = 500;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no alert rule {0} (see `wyckoff alerts list`)")]
    NotFound(i64),
    #[error("stored alert {what} {id} is damaged: {why}")]
    Corrupt {
        what: &'static str,
        id: i64,
        why: String,
    },
    #[error("alert store: {0}")]
    Db(#[from] sqlx::Error),
    #[error("queueing alerts for push: {0}")]
    Push(String),
    #[error("alert store migrations: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

/// A firing to record.
#[derive(Debug, Clone)]
pub(crate) struct NewFiring {
    pub rule_id: Option<i64>,
    pub rule_key: String,
    pub code: String,
    pub name: Option<String>,
    pub bar_date: u32,
    pub condition: AlertCondition,
    pub figures: AlertFigures,
    /// The quote time (Beijing `YYYY-MM-DD HH:MM`) when fired on the day's partial bar.
    pub intraday_at: Option<String>,
}

#[derive(Clone)]
pub struct AlertStore {
    pool: SqlitePool,
}

type RuleRow = (i64, String, String, i64, i64, String);
type FiredRow = (
    i64,
    Option<i64>,
    String,
    Option<String>,
    String,
    String,
    String,
    String,
    String,
    String,
    Option<String>,
);

fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn date_of(text: &str) -> Option<u32> {
    text.replace('-', "").parse().ok()
}

fn json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Corrupt {
        what: "value",
        id: 0,
        why: e.to_string(),
    })
}

fn parse<T: serde::de::DeserializeOwned>(
    what: &'static str,
    id: i64,
    text: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt {
        what,
        id,
        why: format!("{e}: {text}"),
    })
}

fn rule_of(row: RuleRow) -> Result<AlertRule, StoreError> {
    let (id, target, condition, cooldown, enabled, created_at) = row;
    Ok(AlertRule {
        id,
        target: parse::<AlertTarget>("rule", id, &target)?,
        condition: parse::<AlertCondition>("rule", id, &condition)?,
        cooldown_days: u32::try_from(cooldown).unwrap_or(1),
        enabled: enabled != 0,
        created_at,
    })
}

fn fired_of(row: FiredRow) -> Result<FiredAlert, StoreError> {
    let (
        id,
        rule_id,
        code,
        name,
        bar_date,
        condition,
        figures,
        delivered_to,
        delivery,
        created,
        intraday_at,
    ) = row;
    Ok(FiredAlert {
        id,
        rule_id,
        code,
        name,
        bar_date,
        condition: parse("alert", id, &condition)?,
        figures: parse("alert", id, &figures)?,
        delivered_to: parse("alert", id, &delivered_to)?,
        delivery: DeliveryStatus::parse(&delivery).ok_or_else(|| StoreError::Corrupt {
            what: "alert",
            id,
            why: format!("delivery status '{delivery}'"),
        })?,
        created_at: created,
        intraday_at,
    })
}

const FIRED_BY_ID: &str = "SELECT id, rule_id, code, name, bar_date, condition_json, figures_json, delivered_to_json, delivery, created_at, intraday_at FROM alert_fired WHERE id = ?";
const FIRED_NEWEST: &str = "SELECT id, rule_id, code, name, bar_date, condition_json, figures_json, delivered_to_json, delivery, created_at, intraday_at FROM alert_fired ORDER BY id DESC LIMIT ?";

impl AlertStore {
    /// Uses the shared `wyckoff.db` pool (runs this crate's migrations).
    pub async fn new(pool: SqlitePool) -> Result<AlertStore, StoreError> {
        let mut migrator = sqlx::migrate!("./migrations");
        migrator.set_ignore_missing(true);
        migrator.run(&pool).await?;
        Ok(AlertStore { pool })
    }

    /// Stores a rule already checked by [`crate::validate`].
    pub async fn add_rule(
        &self,
        rule: &NewRule,
        now: DateTime<Utc>,
    ) -> Result<AlertRule, StoreError> {
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO alert_rules (target_json, condition_json, cooldown_days, enabled, created_at) VALUES (?, ?, ?, 1, ?) RETURNING id",
        )
        .bind(json(&rule.target)?)
        .bind(json(&rule.condition)?)
        .bind(i64::from(rule.cooldown_days))
        .bind(stamp(now))
        .fetch_one(&self.pool)
        .await?;
        self.rule(id).await
    }

    pub async fn rule(&self, id: i64) -> Result<AlertRule, StoreError> {
        let row: Option<RuleRow> = sqlx::query_as(
            "SELECT id, target_json, condition_json, cooldown_days, enabled, created_at FROM alert_rules WHERE id = ?",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        row.map(rule_of)
            .transpose()?
            .ok_or(StoreError::NotFound(id))
    }

    /// Every rule, oldest first.
    pub async fn rules(&self) -> Result<Vec<AlertRule>, StoreError> {
        let rows: Vec<RuleRow> = sqlx::query_as(
            "SELECT id, target_json, condition_json, cooldown_days, enabled, created_at FROM alert_rules ORDER BY id",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(rule_of).collect()
    }

    /// Removes a rule; the alerts it fired stay in the history.
    pub async fn remove_rule(&self, id: i64) -> Result<(), StoreError> {
        let done = sqlx::query("DELETE FROM alert_rules WHERE id = ?")
            .bind(id)
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(id));
        }
        Ok(())
    }

    pub async fn set_enabled(&self, id: i64, enabled: bool) -> Result<AlertRule, StoreError> {
        let done = sqlx::query("UPDATE alert_rules SET enabled = ? WHERE id = ?")
            .bind(i64::from(enabled))
            .bind(id)
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(id));
        }
        self.rule(id).await
    }

    /// The bar dates each (rule key, code) fired on, for the cooldowns.
    pub(crate) async fn fired_dates(
        &self,
    ) -> Result<HashMap<(String, String), Vec<u32>>, StoreError> {
        let rows: Vec<(String, String, String)> =
            sqlx::query_as("SELECT rule_key, code, bar_date FROM alert_fired")
                .fetch_all(&self.pool)
                .await?;
        let mut out: HashMap<(String, String), Vec<u32>> = HashMap::new();
        for (key, code, date) in rows {
            if let Some(d) = date_of(&date) {
                out.entry((key, code)).or_default().push(d);
            }
        }
        Ok(out)
    }

    /// Records the firings of one check and queues each for every one of `channels` in
    /// one transaction (one commit, not one per alert: a first check over the whole market
    /// records thousands). Recording and queueing are one step because a recorded alert
    /// starts its cooldown: one recorded but never queued would be held back from every
    /// later check and never reach anyone. `None` in place of a firing when the same rule
    /// already fired on the same stock and bar (another process got there first).
    pub(crate) async fn record_all(
        &self,
        firings: Vec<NewFiring>,
        channels: &[Channel],
        now: DateTime<Utc>,
    ) -> Result<Vec<(NewFiring, Option<FiredAlert>)>, StoreError> {
        let created_at = stamp(now);
        let names: Vec<String> = channels.iter().map(|c| c.name.clone()).collect();
        let delivery = if names.is_empty() {
            DeliveryStatus::Recorded
        } else {
            DeliveryStatus::Pending
        };
        let delivered_to = json(&names)?;
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        let mut out = Vec::with_capacity(firings.len());
        // Many rows a statement: a first check over the whole market records thousands,
        // and a statement per row costs more than the rows.
        let mut pending = firings.into_iter().peekable();
        while pending.peek().is_some() {
            let chunk: Vec<NewFiring> = pending.by_ref().take(FIRED_ROWS_A_STATEMENT).collect();
            let rows = chunk
                .iter()
                .map(|f| Ok((iso(f.bar_date), json(&f.condition)?, json(&f.figures)?)))
                .collect::<Result<Vec<_>, StoreError>>()?;
            let mut insert = sqlx::QueryBuilder::new(
                "INSERT INTO alert_fired (rule_id, rule_key, code, name, bar_date, condition_json, figures_json, delivered_to_json, delivery, created_at, intraday_at) ",
            );
            insert.push_values(
                chunk.iter().zip(&rows),
                |mut row, (f, (bar_date, condition, figures))| {
                    row.push_bind(f.rule_id)
                        .push_bind(&f.rule_key)
                        .push_bind(&f.code)
                        .push_bind(&f.name)
                        .push_bind(bar_date)
                        .push_bind(condition)
                        .push_bind(figures)
                        .push_bind(&delivered_to)
                        .push_bind(delivery.as_str())
                        .push_bind(&created_at)
                        .push_bind(&f.intraday_at);
                },
            );
            insert.push(
                " ON CONFLICT (rule_key, code, bar_date) DO NOTHING RETURNING id, rule_key, code, bar_date",
            );
            let written: Vec<(i64, String, String, String)> =
                insert.build_query_as().fetch_all(&mut *tx).await?;
            // A row another process wrote first returns nothing; each id goes to one firing.
            let mut ids: HashMap<(String, String, String), i64> = written
                .into_iter()
                .map(|(id, key, code, date)| ((key, code, date), id))
                .collect();
            let mut queued = Vec::new();
            for (f, (bar_date, _, _)) in chunk.into_iter().zip(rows) {
                let id = ids.remove(&(f.rule_key.clone(), f.code.clone(), bar_date.clone()));
                // The row as just written (no read back per alert).
                let alert = id.map(|id| FiredAlert {
                    id,
                    rule_id: f.rule_id,
                    code: f.code.clone(),
                    name: f.name.clone(),
                    bar_date,
                    condition: f.condition.clone(),
                    figures: f.figures.clone(),
                    delivered_to: names.clone(),
                    delivery,
                    created_at: created_at.clone(),
                    intraday_at: f.intraday_at.clone(),
                });
                // a message only for channels to queue it for
                if let Some(alert) = alert.as_ref().filter(|_| !channels.is_empty()) {
                    queued.push((Some(alert.id), message(alert)));
                }
                out.push((f, alert));
            }
            Outbox::enqueue_many_on(&mut tx, channels, &queued, now)
                .await
                .map_err(|e| StoreError::Push(e.to_string()))?;
        }
        tx.commit().await?;
        Ok(out)
    }

    /// Where an alert was handed and how its delivery stands.
    pub async fn set_delivery(
        &self,
        id: i64,
        delivered_to: &[String],
        status: DeliveryStatus,
    ) -> Result<FiredAlert, StoreError> {
        sqlx::query("UPDATE alert_fired SET delivered_to_json = ?, delivery = ? WHERE id = ?")
            .bind(json(&delivered_to)?)
            .bind(status.as_str())
            .bind(id)
            .execute(&self.pool)
            .await?;
        self.fired(id).await
    }

    pub async fn fired(&self, id: i64) -> Result<FiredAlert, StoreError> {
        let row: Option<FiredRow> = sqlx::query_as(FIRED_BY_ID)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.map(fired_of)
            .transpose()?
            .ok_or(StoreError::NotFound(id))
    }

    /// Fired alerts, newest first (at most `limit`).
    pub async fn history(&self, limit: u32) -> Result<Vec<FiredAlert>, StoreError> {
        let rows: Vec<FiredRow> = sqlx::query_as(FIRED_NEWEST)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
        rows.into_iter().map(fired_of).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use wyckoff_protocol::AlertFigures;

    fn firing(rule_id: i64, code: &str, bar_date: u32) -> NewFiring {
        NewFiring {
            rule_id: Some(rule_id),
            rule_key: format!("rule:{rule_id}"),
            code: code.to_owned(),
            name: Some(format!("name {code}")),
            bar_date,
            condition: AlertCondition::PriceAbove {
                level: rule_id as f64,
            },
            figures: AlertFigures::PriceAbove {
                close: rule_id as f64 + 0.5,
                level: rule_id as f64,
            },
            intraday_at: None,
        }
    }

    /// Recording in batches hands each firing its own row: across statement boundaries,
    /// and with a row another process wrote first in the middle of a batch.
    #[tokio::test]
    async fn batched_recording_maps_every_row_to_its_firing() {
        let dir = tempfile::tempdir().unwrap();
        let pool = wyckoff_db::open(&dir.path().join("wyckoff.db"))
            .await
            .unwrap();
        let store = AlertStore::new(pool).await.unwrap();
        let now = Utc.with_ymd_and_hms(2026, 12, 7, 8, 0, 0).unwrap();
        // written first, as by another process
        let first = store
            .record_all(vec![firing(7, "000007", 20261204)], &[], now)
            .await
            .unwrap();
        let taken = first[0].1.as_ref().unwrap().id;

        let count = FIRED_ROWS_A_STATEMENT * 2 + 3;
        let firings: Vec<NewFiring> = (0..count)
            .map(|i| firing(i as i64, &format!("{:06}", i), 20261204))
            .collect();
        let recorded = store.record_all(firings, &[], now).await.unwrap();
        assert_eq!(recorded.len(), count);
        let mut ids = std::collections::HashSet::new();
        for (f, alert) in &recorded {
            if f.rule_id == Some(7) {
                assert!(alert.is_none(), "the row written first stays the only one");
                continue;
            }
            let alert = alert.as_ref().unwrap();
            assert_ne!(alert.id, taken);
            assert!(ids.insert(alert.id), "ids are distinct");
            let stored = store.fired(alert.id).await.unwrap();
            assert_eq!(stored.code, f.code);
            assert_eq!(stored.rule_id, f.rule_id);
            assert_eq!(stored.condition, f.condition);
            assert_eq!(stored.figures, f.figures);
        }
        assert_eq!(ids.len(), count - 1);
    }
}
