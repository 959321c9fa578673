//! The current Beijing time on the user's message (REFERENCE §0.2): appended to the
//! user message, never to the system prompt, so the prompt prefix stays cacheable. The
//! offset itself is wyckoff-time's; this is only the Chinese line the model reads.

use chrono::{DateTime, Datelike, Utc};
use wyckoff_time::to_beijing;

/// The marker that makes [`with_beijing_time`] idempotent.
pub const MARKER: &str = "当前北京时间：";

const WEEKDAYS: [&str; 7] = ["一", "二", "三", "四", "五", "六", "日"];

/// `[当前北京时间：YYYY-MM-DD HH:MM（星期X，UTC+8）]` for `now`.
pub fn beijing_time_line(now: DateTime<Utc>) -> String {
    let local = to_beijing(now);
    let weekday = WEEKDAYS[local.weekday().num_days_from_monday() as usize];
    format!(
        "[{MARKER}{}（星期{weekday}，UTC+8）]",
        local.format("%Y-%m-%d %H:%M")
    )
}

/// Appends the Beijing time to `text` (`"{text}\n\n[…]"`; empty text → just the line).
/// Text that already carries the marker is returned unchanged.
pub fn with_beijing_time(text: &str, now: DateTime<Utc>) -> String {
    if text.contains(MARKER) {
        return text.to_owned();
    }
    let line = beijing_time_line(now);
    if text.trim().is_empty() {
        line
    } else {
        format!("{text}\n\n{line}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, 0).unwrap()
    }

    #[test]
    fn appends_beijing_time_with_weekday() {
        // 2026-12-02 16:30 UTC is Thursday 2026-12-03 00:30 in Beijing.
        let out = with_beijing_time("分析 000001", at(2026, 12, 2, 16, 30));
        assert_eq!(
            out,
            "分析 000001\n\n[当前北京时间：2026-12-03 00:30（星期四，UTC+8）]"
        );
        let sunday = with_beijing_time("x", at(2026, 12, 6, 1, 5));
        assert!(
            sunday.ends_with("[当前北京时间：2026-12-06 09:05（星期日，UTC+8）]"),
            "{sunday}"
        );
    }

    #[test]
    fn is_idempotent_and_handles_empty_text() {
        let now = at(2026, 1, 5, 2, 0);
        let once = with_beijing_time("hi", now);
        assert_eq!(with_beijing_time(&once, at(2027, 3, 3, 3, 3)), once);
        assert_eq!(
            with_beijing_time("  ", now),
            "[当前北京时间：2026-01-05 10:00（星期一，UTC+8）]"
        );
    }
}
