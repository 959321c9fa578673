//! The structured result a delegate tool hands back, and the policy per status that
//! tells the parent agent what to do with it (seed 11_07; REFERENCE §9.1).

use wyckoff_protocol::{SubAgentPolicy, SubAgentResult, SubAgentStatus, Usage};

use super::budget::fit_result;
use super::roles::SubAgentRole;

/// The policy for a status; failures point the parent at the role's direct tools.
pub fn policy_for(status: SubAgentStatus, role: &SubAgentRole) -> SubAgentPolicy {
    let fallback = || {
        role.fallback_tools
            .iter()
            .map(|t| (*t).to_owned())
            .collect()
    };
    let (next_action, retryable, fallback_tools, instruction) = match status {
        SubAgentStatus::Completed => ("use_result", false, Vec::new(), "使用子 Agent 返回的结论。"),
        SubAgentStatus::Timeout => (
            "fallback_to_direct_tools",
            true,
            fallback(),
            "不要反复委派；用 fallback_tools 做窄范围降级处理。",
        ),
        SubAgentStatus::Error => (
            "fallback_to_direct_tools",
            true,
            fallback(),
            "不要反复委派；用 fallback_tools 获取必要事实后降级回答。",
        ),
        SubAgentStatus::Empty => (
            "fallback_to_direct_tools",
            false,
            fallback(),
            "子 Agent 没有产出；用 fallback_tools 做最小可用回答。",
        ),
        SubAgentStatus::Cancelled => (
            "stop_and_report_cancelled",
            false,
            Vec::new(),
            "用户已中断任务，停止继续调用工具。",
        ),
    };
    SubAgentPolicy {
        next_action: next_action.into(),
        retryable,
        fallback_tools,
        instruction: instruction.into(),
    }
}

/// What the mini loop observed, before budgets and policy are applied.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SubAgentRun {
    pub final_text: String,
    pub usage: Usage,
    pub elapsed_secs: f64,
    pub rounds: u32,
    pub tool_rounds: u32,
    pub tool_calls: Vec<String>,
    pub refused_calls: Vec<String>,
    pub background_task_ids: Vec<String>,
    pub context_truncated: bool,
    pub error: String,
}

/// The §9.3 item 8 result: the text only when completed (cut to the role's budget),
/// background task ids without duplicates, and the policy for the status.
pub fn build_result(
    role: &SubAgentRole,
    status: SubAgentStatus,
    run: SubAgentRun,
) -> SubAgentResult {
    let fitted = match status {
        SubAgentStatus::Completed => fit_result(&run.final_text, role.result_budget_chars),
        _ => fit_result("", role.result_budget_chars),
    };
    let mut task_ids: Vec<String> = Vec::new();
    for id in run.background_task_ids {
        if !task_ids.contains(&id) {
            task_ids.push(id);
        }
    }
    SubAgentResult {
        agent: role.name.into(),
        status,
        result: fitted.text,
        usage: run.usage,
        elapsed: run.elapsed_secs,
        rounds: run.rounds,
        tool_rounds: run.tool_rounds,
        tool_calls: run.tool_calls,
        refused_calls: run.refused_calls,
        background_task_ids: task_ids,
        context_truncated: run.context_truncated,
        result_truncated: fitted.truncated,
        error: run.error,
        policy: policy_for(status, role),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subagents::budget::RESULT_TRUNCATED_MARKER;
    use crate::subagents::roles::role;
    use serde_json::json;

    #[test]
    fn policy_table() {
        use SubAgentStatus::*;
        // (status, next_action, retryable, gets the role's fallback set)
        let table = [
            (Completed, "use_result", false, false),
            (Timeout, "fallback_to_direct_tools", true, true),
            (Error, "fallback_to_direct_tools", true, true),
            (Empty, "fallback_to_direct_tools", false, true),
            (Cancelled, "stop_and_report_cancelled", false, false),
        ];
        for r in ["research", "analysis", "trading"].map(|n| role(n).unwrap()) {
            for (status, action, retryable, has_fallback) in table {
                let p = policy_for(status, r);
                assert_eq!(p.next_action, action, "{status:?}");
                assert_eq!(p.retryable, retryable, "{status:?}");
                assert_eq!(!p.fallback_tools.is_empty(), has_fallback, "{status:?}");
                assert!(!p.instruction.is_empty());
            }
        }
        let fb = |n: &str| policy_for(Timeout, role(n).unwrap()).fallback_tools;
        assert_eq!(
            fb("research"),
            [
                "get_market_overview",
                "query_history",
                "check_background_tasks"
            ]
        );
        assert_eq!(
            fb("analysis"),
            ["analyze_stock", "portfolio", "get_market_overview"]
        );
        assert_eq!(
            fb("trading"),
            [
                "portfolio",
                "generate_strategy_decision",
                "get_market_overview"
            ]
        );
    }

    #[test]
    fn result_object_has_exactly_the_seed_fields() {
        let run = SubAgentRun {
            final_text: "结论".into(),
            rounds: 2,
            tool_calls: vec!["analyze_stock".into()],
            background_task_ids: vec!["t1".into(), "t1".into(), "t2".into()],
            ..SubAgentRun::default()
        };
        let result = build_result(role("analysis").unwrap(), SubAgentStatus::Completed, run);
        let value = serde_json::to_value(&result).unwrap();
        let mut keys: Vec<&str> = value
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "agent",
                "background_task_ids",
                "context_truncated",
                "elapsed",
                "error",
                "policy",
                "refused_calls",
                "result",
                "result_truncated",
                "rounds",
                "status",
                "tool_calls",
                "tool_rounds",
                "usage"
            ]
        );
        assert_eq!(value["status"], json!("completed"));
        assert_eq!(value["background_task_ids"], json!(["t1", "t2"]));
        assert_eq!(value["policy"]["next_action"], json!("use_result"));
    }

    #[test]
    fn only_completed_runs_carry_text_and_it_is_cut_to_the_budget() {
        let trading = role("trading").unwrap();
        let long = SubAgentRun {
            final_text: "持".repeat(5_000),
            ..SubAgentRun::default()
        };
        let done = build_result(trading, SubAgentStatus::Completed, long.clone());
        assert!(done.result_truncated);
        assert_eq!(done.result.chars().count(), trading.result_budget_chars);
        assert!(done.result.ends_with(RESULT_TRUNCATED_MARKER));
        let timed_out = build_result(trading, SubAgentStatus::Timeout, long);
        assert_eq!(timed_out.result, "");
        assert!(!timed_out.result_truncated);
    }
}
