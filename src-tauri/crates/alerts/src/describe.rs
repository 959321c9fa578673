//! Alerts in words: the CLI's lines and the pushed messages say the same.

use wyckoff_protocol::{AlertCondition, AlertFigures, FiredAlert, MissingData, PhaseState};

pub fn condition_text(c: &AlertCondition) -> String {
    match c {
        AlertCondition::PriceAbove { level } => format!("close ≥ {level}"),
        AlertCondition::PriceBelow { level } => format!("close ≤ {level}"),
        AlertCondition::ChangeAbove { pct } => format!("day change ≥ {pct:+}%"),
        AlertCondition::ChangeBelow { pct } => format!("day change ≤ {pct:+}%"),
        AlertCondition::VolumeRatio { k } => format!("volume ≥ {k}× the 20-day average"),
        AlertCondition::Event { event: Some(e) } => format!("Wyckoff event {e}"),
        AlertCondition::Event { event: None } => "any Wyckoff event".into(),
        AlertCondition::PhaseChange => "phase change".into(),
        AlertCondition::HealthChange => "health change".into(),
        AlertCondition::StopLoss => "close ≤ the holding's stop-loss".into(),
        AlertCondition::TargetReached => "close ≥ the holding's target".into(),
    }
}

fn phase_text(p: &Option<PhaseState>) -> String {
    p.as_ref()
        .map_or_else(|| "none".into(), |p| format!("{} {}", p.schematic, p.phase))
}

pub fn figures_text(f: &AlertFigures) -> String {
    match f {
        AlertFigures::PriceAbove { close, level } => format!("close {close:.2} ≥ {level}"),
        AlertFigures::PriceBelow { close, level } => format!("close {close:.2} ≤ {level}"),
        AlertFigures::ChangeAbove {
            change_pct,
            threshold_pct,
            close,
            prev_close,
        } => format!(
            "day change {change_pct:+.2}% ≥ {threshold_pct:+}% (close {close:.2}, previous {prev_close:.2})"
        ),
        AlertFigures::ChangeBelow {
            change_pct,
            threshold_pct,
            close,
            prev_close,
        } => format!(
            "day change {change_pct:+.2}% ≤ {threshold_pct:+}% (close {close:.2}, previous {prev_close:.2})"
        ),
        AlertFigures::VolumeRatio {
            volume,
            avg_volume_20,
            ratio,
            k,
        } => format!(
            "volume {volume:.0} = {ratio:.2}× the 20-day average {avg_volume_20:.0} (≥ {k}×)"
        ),
        AlertFigures::Event { events } => events
            .iter()
            .map(|e| {
                format!(
                    "{} ({}) on {} at {:.2}, known on {}",
                    e.event, e.schematic, e.bar_date, e.price, e.known_on
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
        AlertFigures::PhaseChange {
            from,
            to,
            prev_date,
        } => format!(
            "phase {} → {} (previous close {prev_date})",
            phase_text(from),
            phase_text(to)
        ),
        AlertFigures::HealthChange {
            from,
            to,
            prev_date,
            reasons,
        } => format!(
            "health {from} → {to} (previous close {prev_date}; {})",
            reasons.join(", ")
        ),
        AlertFigures::StopLoss { close, stop_loss } => {
            format!("close {close:.2} ≤ stop-loss {stop_loss}")
        }
        AlertFigures::TargetReached { close, target } => {
            format!("close {close:.2} ≥ target {target}")
        }
    }
}

pub fn missing_text(m: &MissingData) -> String {
    match m {
        MissingData::NoBars => "no cached bar at or before the date".into(),
        MissingData::TooFewBars { needed, have } => {
            format!("needs {needed} bars up to the close, the cache has {have}")
        }
        MissingData::NoVolume => "no volume traded in the 20 bars before".into(),
        MissingData::NoPreviousClose => "no previous close".into(),
    }
}

/// One alert as a message: the stock, the rule's figures, and the data's date.
/// One fired during the session says so, with the quote's time: its "close" is the last
/// price then, its volume the day's pace.
pub fn alert_text(a: &FiredAlert) -> String {
    let when = match &a.intraday_at {
        Some(at) => format!("盘中 intraday, live quote at {at} Beijing, partial bar"),
        None => format!("data as of {}", a.bar_date),
    };
    format!(
        "{} {} — {}: {} ({when})",
        a.code,
        a.name.as_deref().unwrap_or(""),
        condition_text(&a.condition),
        figures_text(&a.figures),
    )
}
