//! Which events a channel is sent: fired alerts (on unless turned off), finished background
//! tasks, finished schedule runs and approvals waiting in the inbox (off unless asked for).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PushEvent {
    Alerts,
    Tasks,
    Schedules,
    Approvals,
}

impl PushEvent {
    pub const ALL: [PushEvent; 4] = [
        PushEvent::Alerts,
        PushEvent::Tasks,
        PushEvent::Schedules,
        PushEvent::Approvals,
    ];

    /// What a new channel gets when nothing is said: alerts only.
    pub const DEFAULT: [PushEvent; 1] = [PushEvent::Alerts];

    pub fn as_str(self) -> &'static str {
        match self {
            PushEvent::Alerts => "alerts",
            PushEvent::Tasks => "tasks",
            PushEvent::Schedules => "schedules",
            PushEvent::Approvals => "approvals",
        }
    }

    pub fn parse(text: &str) -> Option<PushEvent> {
        let text = text.trim();
        PushEvent::ALL
            .into_iter()
            .find(|e| e.as_str().eq_ignore_ascii_case(text))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventsError {
    #[error("unknown push event '{0}': use alerts, tasks, schedules or approvals")]
    Unknown(String),
    #[error("name at least one push event (alerts, tasks, schedules, approvals)")]
    Empty,
}

/// `alerts,tasks` (any case, spaces allowed) → the events in their fixed order, each once.
pub fn parse_events(text: &str) -> Result<Vec<PushEvent>, EventsError> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let e = PushEvent::parse(part).ok_or_else(|| EventsError::Unknown(part.to_owned()))?;
        out.push(e);
    }
    normalise(out)
}

/// The events sorted and each once; none is an error (a channel sent nothing is no use).
pub fn normalise(mut events: Vec<PushEvent>) -> Result<Vec<PushEvent>, EventsError> {
    events.sort();
    events.dedup();
    if events.is_empty() {
        return Err(EventsError::Empty);
    }
    Ok(events)
}

/// The stored form: `alerts,tasks`.
pub fn events_text(events: &[PushEvent]) -> String {
    events
        .iter()
        .map(|e| e.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// The stored form read back; unknown names (a newer version's) are skipped, and a
/// column with nothing known in it reads as the default.
pub fn stored_events(text: &str) -> Vec<PushEvent> {
    let known: Vec<PushEvent> = text.split(',').filter_map(PushEvent::parse).collect();
    normalise(known).unwrap_or_else(|_| PushEvent::DEFAULT.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use PushEvent::*;

    #[test]
    fn events_parse_in_any_order_and_case_each_once() {
        let table: [(&str, Result<Vec<PushEvent>, EventsError>); 7] = [
            ("alerts", Ok(vec![Alerts])),
            ("tasks", Ok(vec![Tasks])),
            (
                "approvals, Schedules,TASKS,alerts",
                Ok(vec![Alerts, Tasks, Schedules, Approvals]),
            ),
            ("tasks,tasks,", Ok(vec![Tasks])),
            ("", Err(EventsError::Empty)),
            (" , ", Err(EventsError::Empty)),
            ("alerts,trades", Err(EventsError::Unknown("trades".into()))),
        ];
        for (text, want) in table {
            assert_eq!(parse_events(text), want, "{text:?}");
        }
    }

    #[test]
    fn the_stored_form_round_trips_and_an_unreadable_one_is_the_default() {
        let all = PushEvent::ALL.to_vec();
        assert_eq!(events_text(&all), "alerts,tasks,schedules,approvals");
        assert_eq!(stored_events(&events_text(&all)), all);
        assert_eq!(stored_events("tasks"), vec![Tasks]);
        assert_eq!(stored_events("tasks,later_kind"), vec![Tasks]);
        assert_eq!(stored_events(""), vec![Alerts]);
        assert_eq!(stored_events("later_kind"), vec![Alerts]);
    }
}
