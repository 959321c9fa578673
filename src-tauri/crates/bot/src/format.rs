//! The answer as a chat shows it: the model's Markdown in the platform's dialect, split to
//! the platform's size limit, and the reconnect delay. Pure functions.

use std::time::Duration;

use wyckoff_session::bot_store::PendingPairing;
use wyckoff_session::desk_bots::BotAnswer;

/// Telegram's limit for one message's text, in UTF-16 units.
pub const TELEGRAM_LIMIT: usize = 4096;
/// DingTalk's limit for one robot message's Markdown, in UTF-8 bytes (the push
/// channel's figure).
pub const DINGTALK_LIMIT: usize = 20_000;
/// Feishu's limit for one text message, in UTF-8 bytes (the push channel's figure).
pub const FEISHU_LIMIT: usize = 18_000;

/// Telegram counts UTF-16 code units; so does this (an emoji counts two).
fn units(text: &str) -> usize {
    text.encode_utf16().count()
}

/// DingTalk and Feishu count bytes (a CJK character is three).
fn bytes(text: &str) -> usize {
    text.len()
}

/// The model's Markdown in Telegram's (legacy) Markdown: `**bold**` and headings become
/// `*bold*`; code blocks stay as they are. A message Telegram cannot parse is sent again
/// as plain text by the client.
pub fn telegram_markdown(text: &str) -> String {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            out.push(line.to_owned());
            continue;
        }
        if in_code {
            out.push(line.to_owned());
            continue;
        }
        let trimmed = line.trim_start();
        let heading = trimmed.trim_start_matches('#');
        let line = if trimmed.starts_with('#') && heading.starts_with(' ') {
            format!("*{}*", heading.trim().replace("**", ""))
        } else {
            line.replace("**", "*")
        };
        out.push(line);
    }
    out.join("\n")
}

/// Splits `text` into messages of at most `limit` UTF-16 units (Telegram's measure): at
/// line ends where it can, a longer line at character boundaries; a code block cut in two
/// is closed at the end of one part and opened again at the start of the next.
pub fn split(text: &str, limit: usize) -> Vec<String> {
    split_with(text, limit, units)
}

/// [`split`] with `limit` in UTF-8 bytes (DingTalk's and Feishu's measure).
pub fn split_bytes(text: &str, limit: usize) -> Vec<String> {
    split_with(text, limit, bytes)
}

fn split_with(text: &str, limit: usize, units: fn(&str) -> usize) -> Vec<String> {
    const FENCE: &str = "```";
    // A part cut inside a code block ends with "\n```": only such a part keeps room for
    // it, so a message that fits the limit is never split for a fence it does not need.
    let closing = FENCE.len() + 1;
    let mut parts: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut in_code = false;
    let push = |current: &mut String, in_code: bool, parts: &mut Vec<String>| {
        if current.trim().is_empty() {
            current.clear();
            return;
        }
        let mut part = std::mem::take(current);
        if in_code {
            part.push('\n');
            part.push_str(FENCE);
        }
        parts.push(part);
        // The next part opens the block again; its first line follows on a new line.
        if in_code {
            current.push_str(FENCE);
        }
    };
    for line in text.lines() {
        let fence = line.trim_start().starts_with(FENCE);
        // Whether the part is inside a code block once this line is in it.
        let open_after = in_code != fence;
        let room_after = if open_after {
            limit.saturating_sub(closing)
        } else {
            limit
        };
        // A line longer than a whole part goes in pieces, each fitting a part that may
        // open with a fence and close with one.
        let piece_room = if in_code || fence {
            limit.saturating_sub(2 * closing)
        } else {
            limit
        }
        .max(1);
        let mut pieces: Vec<String> = Vec::new();
        let mut piece = String::new();
        let mut buf = [0u8; 4];
        for c in line.chars() {
            if units(&piece) + units(c.encode_utf8(&mut buf)) > piece_room {
                pieces.push(std::mem::take(&mut piece));
            }
            piece.push(c);
        }
        pieces.push(piece);
        for piece in pieces {
            let extra = usize::from(!current.is_empty());
            if units(&current) + extra + units(&piece) > room_after {
                push(&mut current, in_code, &mut parts);
            }
            if !current.is_empty() {
                current.push('\n');
            }
            current.push_str(&piece);
        }
        in_code = open_after;
    }
    push(&mut current, false, &mut parts);
    parts
}

/// The wait before reconnect attempt `failures` (1, 2, …): doubling from `base`, at most
/// `max`.
pub fn backoff(failures: u32, base: Duration, max: Duration) -> Duration {
    let shift = failures.saturating_sub(1).min(16);
    base.saturating_mul(1u32 << shift).min(max)
}

/// What an unknown sender is told: the code and how the owner uses it, nothing else.
pub fn pairing_text(pairing: &PendingPairing) -> String {
    format!(
        "这个机器人只回答主人配对过的用户。\n配对码：{}（1 小时内有效）\n请主人在电脑上运行：wyckoff bot pair {}",
        pairing.code, pairing.code
    )
}

/// The answer to a message that went to the desk.
pub fn answer_text(answer: &BotAnswer) -> String {
    match answer {
        BotAnswer::Answer {
            tool_lines,
            text,
            approvals,
            ..
        } => {
            let mut out = Vec::new();
            if !tool_lines.is_empty() {
                out.push(tool_lines.join("\n"));
            }
            if !text.trim().is_empty() {
                out.push(text.trim().to_owned());
            }
            for ask in approvals {
                out.push(format!(
                    "需要审批：{}（请求 {}）\n审批人回复 /approve {} {} 批准，或 /deny {} {} 拒绝；主人也可在桌面端或命令行处理。",
                    ask.display_name,
                    ask.request_id,
                    ask.request_id,
                    ask.code,
                    ask.request_id,
                    ask.code
                ));
            }
            if out.is_empty() {
                "（没有回答）".to_owned()
            } else {
                out.join("\n\n")
            }
        }
        BotAnswer::BudgetSpent { used, budget } => {
            format!("今日额度已用完：已用 {used} / {budget} tokens。明天再来，或请主人调高额度。")
        }
        BotAnswer::RateLimited { limit } => {
            format!("发送太频繁：每分钟最多 {limit} 条，请稍后再试。")
        }
        BotAnswer::Failed { message } => format!("没有完成：{message}"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn markdown_becomes_telegrams_dialect() {
        let cases = [
            ("**吸筹** 阶段", "*吸筹* 阶段"),
            ("## 结论", "*结论*"),
            ("#hashtag", "#hashtag"),
            ("```\n**x**\n```", "```\n**x**\n```"),
        ];
        for (input, want) in cases {
            assert_eq!(telegram_markdown(input), want, "{input}");
        }
    }

    #[test]
    fn splits_fit_the_limit_and_lose_nothing() {
        let short = "一行\n两行";
        assert_eq!(split(short, TELEGRAM_LIMIT), vec![short.to_owned()]);

        let long: String = (0..500).map(|i| format!("第{i}行 威科夫\n")).collect();
        let parts = split(&long, 1000);
        assert!(parts.len() > 1);
        assert!(parts.iter().all(|p| units(p) <= 1000), "{parts:?}");
        assert_eq!(parts.join("\n"), long.trim_end());

        // One line longer than a part.
        let line = "量".repeat(2500);
        let parts = split(&line, 1000);
        assert!(parts.iter().all(|p| units(p) <= 1000));
        assert_eq!(parts.concat(), line);
    }

    #[test]
    fn byte_splits_count_a_cjk_character_as_three() {
        let line = "量".repeat(1000);
        let parts = split_bytes(&line, 1000);
        assert!(parts.iter().all(|p| p.len() <= 1000), "{parts:?}");
        // 3000 bytes in parts of at most 1000 (333 whole characters): four parts.
        assert_eq!(parts.len(), 4);
        assert_eq!(parts.concat(), line);
        let long: String = (0..300).map(|i| format!("第{i}行\n")).collect();
        let parts = split_bytes(&long, DINGTALK_LIMIT);
        assert_eq!(parts, vec![long.trim_end().to_owned()]);
    }

    #[test]
    fn a_code_block_cut_in_two_is_closed_and_reopened() {
        let body: String = (0..100).map(|i| format!("row {i:03}\n")).collect();
        let text = format!("表：\n```\n{body}```\n完");
        let parts = split(&text, 300);
        assert!(parts.len() > 2);
        for p in &parts {
            assert!(units(p) <= 300);
            assert_eq!(p.matches("```").count() % 2, 0, "unbalanced: {p}");
        }
    }

    /// `text` fits in one message and one unit more does not, under `split_at`.
    fn sits_on_the_limit(
        text: &str,
        one_more: &str,
        limit: usize,
        measure: fn(&str) -> usize,
        split_at: fn(&str, usize) -> Vec<String>,
    ) {
        assert_eq!(measure(text), limit);
        assert_eq!(split_at(text, limit), vec![text.to_owned()]);
        let over = format!("{text}{one_more}");
        assert_eq!(measure(&over), limit + 1);
        let parts = split_at(&over, limit);
        assert_eq!(
            parts.len(),
            2,
            "{:?}",
            parts.iter().map(|p| measure(p)).collect::<Vec<_>>()
        );
        assert!(parts.iter().all(|p| measure(p) <= limit));
    }

    #[test]
    fn a_message_exactly_at_a_platforms_limit_is_one_message_and_one_unit_more_is_two() {
        // Telegram counts UTF-16 units: a CJK character is one, an emoji two.
        let lines = format!("{}\n{}a", "量".repeat(2000), "😀".repeat(1047));
        sits_on_the_limit(&lines, "b", TELEGRAM_LIMIT, units, split);
        assert_eq!(
            split(&format!("{lines}b"), TELEGRAM_LIMIT)[0],
            "量".repeat(2000),
            "cut at the line end"
        );
        // One line of emoji: cut between two, never inside one.
        let emoji = "😀".repeat(TELEGRAM_LIMIT / 2);
        sits_on_the_limit(&emoji, "a", TELEGRAM_LIMIT, units, split);
        assert_eq!(
            split(&format!("{emoji}a"), TELEGRAM_LIMIT).concat(),
            format!("{emoji}a")
        );
        // A whole code block that fits is not cut for a fence it does not need.
        let block = |n: usize| format!("```\n{}\n```", "x".repeat(n));
        let fits = block(TELEGRAM_LIMIT - 8);
        assert_eq!(units(&fits), TELEGRAM_LIMIT);
        assert_eq!(split(&fits, TELEGRAM_LIMIT), vec![fits.clone()]);
        let over = split(&block(TELEGRAM_LIMIT - 7), TELEGRAM_LIMIT);
        assert_eq!(over.len(), 2, "{over:?}");
        assert!(over.iter().all(|p| units(p) <= TELEGRAM_LIMIT));

        // DingTalk, WeCom and Feishu count UTF-8 bytes: a CJK character is three.
        for limit in [DINGTALK_LIMIT, crate::wecom::WECOM_LIMIT] {
            let text = format!("{}\nx", "量".repeat((limit - 2) / 3));
            let pad = "y".repeat(limit - text.len());
            sits_on_the_limit(&format!("{text}{pad}"), "z", limit, bytes, split_bytes);
        }
        let text = format!("{}\nab", "量".repeat((FEISHU_LIMIT - 3) / 3));
        sits_on_the_limit(&text, "c", FEISHU_LIMIT, bytes, split_bytes);
    }

    #[test]
    fn a_code_block_cut_at_the_limit_is_closed_and_reopened_within_it() {
        let body: String = (0..700).map(|i| format!("row {i:04}\n")).collect();
        let text = format!("表：\n```\n{body}```\n完");
        let parts = split(&text, TELEGRAM_LIMIT);
        assert_eq!(parts.len(), 2, "{parts:?}");
        for p in &parts {
            assert!(units(p) <= TELEGRAM_LIMIT, "{}", units(p));
            assert_eq!(p.matches("```").count() % 2, 0, "unbalanced: {p}");
        }
        assert!(parts[0].ends_with("\n```"));
        assert!(parts[1].starts_with("```\nrow "), "{}", &parts[1][..20]);
        // Nothing lost: without the added fences the parts are the text again.
        let rejoined = format!(
            "{}\n{}",
            parts[0].strip_suffix("\n```").unwrap(),
            parts[1].strip_prefix("```\n").unwrap()
        );
        assert_eq!(rejoined, text);
    }

    #[test]
    fn backoff_doubles_to_its_cap() {
        let (base, max) = (Duration::from_millis(500), Duration::from_secs(8));
        let cases = [
            (1, 500),
            (2, 1000),
            (3, 2000),
            (5, 8000),
            (9, 8000),
            (40, 8000),
        ];
        for (failures, ms) in cases {
            assert_eq!(backoff(failures, base, max), Duration::from_millis(ms));
        }
    }

    #[test]
    fn limits_are_said_with_their_numbers() {
        assert_eq!(
            answer_text(&BotAnswer::RateLimited { limit: 2 }),
            "发送太频繁：每分钟最多 2 条，请稍后再试。"
        );
        assert!(
            answer_text(&BotAnswer::BudgetSpent {
                used: 1230,
                budget: 1000
            })
            .contains("1230 / 1000")
        );
    }
}
