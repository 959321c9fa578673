//! Context and result budgets: deterministic cuts that keep the newest part of the
//! context and the head of the result, each with a marker the model can see.

use crate::compaction::estimate::text_tokens;

pub const CONTEXT_TRUNCATED_MARKER: &str = "[上下文已按预算裁剪，仅保留最近部分]";
pub const RESULT_TRUNCATED_MARKER: &str = "\n\n[子 Agent 结果已按输出预算截断]";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FittedContext {
    pub text: String,
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FittedResult {
    pub text: String,
    pub truncated: bool,
}

/// Keeps `context` when it fits `budget_tokens`; otherwise the longest suffix (on a
/// char boundary) that fits after the marker line. Binary search over char offsets:
/// a longer suffix never has fewer tokens, so the search is exact.
pub fn fit_context(context: &str, budget_tokens: u64) -> FittedContext {
    if text_tokens(context) <= budget_tokens {
        return FittedContext {
            text: context.to_owned(),
            truncated: false,
        };
    }
    let starts: Vec<usize> = context.char_indices().map(|(i, _)| i).collect();
    let with_marker = |start: usize| format!("{CONTEXT_TRUNCATED_MARKER}\n{}", &context[start..]);
    // lo: fewest kept chars known to fit (0 = only the marker); hi: most chars to try.
    let (mut lo, mut hi) = (0usize, starts.len());
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        let start = starts[starts.len() - mid];
        if text_tokens(&with_marker(start)) <= budget_tokens {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let start = if lo == 0 {
        context.len()
    } else {
        starts[starts.len() - lo]
    };
    FittedContext {
        text: with_marker(start),
        truncated: true,
    }
}

/// Keeps `result` when it has at most `budget_chars` chars; otherwise its head plus the
/// marker, `budget_chars` chars in all.
pub fn fit_result(result: &str, budget_chars: usize) -> FittedResult {
    if result.chars().count() <= budget_chars {
        return FittedResult {
            text: result.to_owned(),
            truncated: false,
        };
    }
    let keep = budget_chars.saturating_sub(RESULT_TRUNCATED_MARKER.chars().count());
    let head: String = result.chars().take(keep).collect();
    FittedResult {
        text: format!("{head}{RESULT_TRUNCATED_MARKER}"),
        truncated: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_within_budget_is_kept_verbatim() {
        let ctx = "持仓 600519 成本 1500";
        let fitted = fit_context(ctx, text_tokens(ctx));
        assert_eq!(
            fitted,
            FittedContext {
                text: ctx.into(),
                truncated: false
            }
        );
    }

    #[test]
    fn context_over_budget_keeps_the_newest_part_that_fits() {
        let ctx: String = (0..400)
            .map(|i| format!("第{i}条记录：成交量放大。\n"))
            .collect();
        for budget in [60u64, 200, 900] {
            let fitted = fit_context(&ctx, budget);
            assert!(fitted.truncated, "budget {budget}");
            assert!(text_tokens(&fitted.text) <= budget, "budget {budget}");
            let kept = fitted
                .text
                .strip_prefix(&format!("{CONTEXT_TRUNCATED_MARKER}\n"))
                .unwrap();
            assert!(ctx.ends_with(kept), "a suffix is kept");
            assert!(kept.contains("第399条"), "the newest record survives");
            // one more char would not fit: the longest fitting suffix
            let longer = &ctx[ctx.len()
                - kept.len()
                - ctx[..ctx.len() - kept.len()]
                    .chars()
                    .next_back()
                    .unwrap()
                    .len_utf8()..];
            let more = format!("{CONTEXT_TRUNCATED_MARKER}\n{longer}");
            assert!(text_tokens(&more) > budget, "budget {budget}");
            // deterministic
            assert_eq!(fit_context(&ctx, budget), fitted);
        }
    }

    #[test]
    fn tiny_budget_keeps_only_the_marker() {
        let fitted = fit_context(&"长上下文".repeat(100), 1);
        assert!(fitted.truncated);
        assert_eq!(fitted.text, format!("{CONTEXT_TRUNCATED_MARKER}\n"));
    }

    #[test]
    fn result_table() {
        let marker_len = RESULT_TRUNCATED_MARKER.chars().count();
        // (input chars, budget, truncated)
        for (len, budget, truncated) in [
            (10, 10, false),
            (9, 10, false),
            (11, 10, true),
            (5000, 1600, true),
        ] {
            let input: String = "量".repeat(len);
            let fitted = fit_result(&input, budget);
            assert_eq!(fitted.truncated, truncated, "{len}/{budget}");
            if truncated {
                assert!(budget < marker_len || fitted.text.chars().count() == budget);
                assert!(fitted.text.ends_with(RESULT_TRUNCATED_MARKER));
            } else {
                assert_eq!(fitted.text, input);
            }
        }
    }
}
