//! The one governance table for sub-agents (seed 11_07 wins over seed 11 §9: research
//! does not get evaluate_recommendation_events; no role gets update_portfolio).

use std::time::Duration;

/// Shared by every role: plan briefly, verify with tools, never wait for background
/// work (seed 11_07: the main agent follows it up). Names no tool, so it holds for every
/// whitelist.
const PLAN_PREFIX: &str = "# 工作方式\n\
简单任务直接用必要的工具取数；复杂任务先用一到三行写出步骤再动手。\n\
所有事实以工具返回为准，不要凭记忆补数字；缺数据时说明缺什么、数据截至何时。\n\
只有工具无法确定关键参数时才请求澄清。\n\
后台工具会立即返回 task_id：不要等待它完成，也不要重复发起；把 task_id 写进结论并说明仍在运行，由主 Agent 跟进结果。\n";

const RESEARCH_PROMPT: &str = "你是威科夫投研团队中的研究员，专职收集数据与情报：\
行情概览、个股与历史记录、全市场扫描、回测。\n\
只汇报事实和数据，不给买卖建议；每项数据注明来源与时效。\n\
被要求发起扫描或回测时，报告 task_id 即可；任务目标需要候选或结论时，用 check_background_tasks 读取已完成任务的 result_summary，未完成就如实说明。\n";

const ANALYSIS_PROMPT: &str = "你是威科夫投研团队的首席分析师，负责个股诊断、持仓体检和研报。\n\
按量价框架组织结论：所处阶段、供需关系、关键事件（Spring、SOS、LPS 等）、\
MA50/MA200 均线结构、主力意图，以及决定去留的关键价位。\n\
analyze_stock 给出的确定性字段（health、accum_stage、l4_triggers、candidate_lane、candidate_entry_type、candidate_score、exit_signal、stop_loss_status）必须原样引用，不得改写或自行推算。\n\
只有任务要求研报时才发起 generate_ai_report：它在后台运行，你读不到研报正文，只报告它的 task_id，不要转述或编造研报内容。\n";

const TRADING_PROMPT: &str = "你是威科夫投研团队的交易决策官，只产出交易计划与风险条件。\n\
对每个持仓给出 EXIT / TRIM / HOLD 之一并说明理由；买入计划必须同时给出入场区间、止损价和盘口确认条件。\n\
不给金额或股数（由下单系统决定），也绝不声称已经执行任何交易：真实调仓只能由主 Agent 在用户确认后完成。\n\
只有任务明确要求正式攻防决策时才发起 generate_strategy_decision：它在后台运行，你读不到它的结果，附上 task_id 由主 Agent 跟进；你自己的计划以 portfolio、analyze_stock 等工具的结果为准。\n";

/// The fields of analyze_stock's result the analysis prompt tells the model to quote as
/// they are (the session's tests check the tool returns each of them).
pub const ANALYSIS_VERBATIM_FIELDS: [&str; 8] = [
    "health",
    "accum_stage",
    "l4_triggers",
    "candidate_lane",
    "candidate_entry_type",
    "candidate_score",
    "exit_signal",
    "stop_loss_status",
];

/// One role's limits and tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubAgentRole {
    pub name: &'static str,
    /// The delegate tool that starts this role.
    pub delegate_tool: &'static str,
    /// Shown in progress lines.
    pub label: &'static str,
    pub timeout: Duration,
    pub tool_timeout: Duration,
    pub max_tool_rounds: u32,
    pub context_budget_tokens: u64,
    pub result_budget_chars: usize,
    pub tools: &'static [&'static str],
    /// What the parent falls back to when this role fails.
    pub fallback_tools: &'static [&'static str],
    pub description: &'static str,
    system_prompt: &'static str,
}

impl SubAgentRole {
    /// The role's system prompt (shared working rules first).
    pub fn system_prompt(&self) -> String {
        format!("{PLAN_PREFIX}\n{}", self.system_prompt)
    }

    pub fn allows(&self, tool: &str) -> bool {
        self.tools.contains(&tool)
    }
}

pub const ROLES: [SubAgentRole; 3] = [
    SubAgentRole {
        name: "research",
        delegate_tool: "delegate_to_research",
        label: "研究 agent",
        timeout: Duration::from_secs(240),
        tool_timeout: Duration::from_secs(90),
        max_tool_rounds: 8,
        context_budget_tokens: 24_000,
        result_budget_chars: 3_000,
        tools: &[
            "search_stock_by_name",
            "analyze_stock",
            "get_market_overview",
            "get_market_history",
            "query_history",
            "screen_stocks",
            "run_backtest",
            "check_background_tasks",
            "annotate_chart",
        ],
        fallback_tools: &[
            "get_market_overview",
            "query_history",
            "check_background_tasks",
        ],
        description: "数据收集、全市场扫描、信号、复盘、回测",
        system_prompt: RESEARCH_PROMPT,
    },
    SubAgentRole {
        name: "analysis",
        delegate_tool: "delegate_to_analysis",
        label: "分析 agent",
        timeout: Duration::from_secs(180),
        tool_timeout: Duration::from_secs(75),
        max_tool_rounds: 8,
        context_budget_tokens: 20_000,
        result_budget_chars: 2_500,
        tools: &[
            "analyze_stock",
            "portfolio",
            "get_market_overview",
            "get_market_history",
            "generate_ai_report",
            "annotate_chart",
        ],
        fallback_tools: &["analyze_stock", "portfolio", "get_market_overview"],
        description: "个股诊断、持仓体检、AI 研报",
        system_prompt: ANALYSIS_PROMPT,
    },
    SubAgentRole {
        name: "trading",
        delegate_tool: "delegate_to_trading",
        label: "交易 agent",
        timeout: Duration::from_secs(120),
        tool_timeout: Duration::from_secs(45),
        max_tool_rounds: 6,
        context_budget_tokens: 12_000,
        result_budget_chars: 1_600,
        tools: &[
            "portfolio",
            "generate_strategy_decision",
            "analyze_stock",
            "get_market_overview",
            "get_market_history",
        ],
        fallback_tools: &[
            "portfolio",
            "generate_strategy_decision",
            "get_market_overview",
        ],
        description: "去留决策、攻防指令、调仓计划",
        system_prompt: TRADING_PROMPT,
    },
];

/// The role by name (`research`, `analysis`, `trading`).
pub fn role(name: &str) -> Option<&'static SubAgentRole> {
    ROLES.iter().find(|r| r.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn governance_table_matches_seed_11_07() {
        // (name, total s, tool s, rounds, context tokens, result chars)
        let expected = [
            ("research", 240, 90, 8, 24_000, 3_000),
            ("analysis", 180, 75, 8, 20_000, 2_500),
            ("trading", 120, 45, 6, 12_000, 1_600),
        ];
        for (name, total, tool, rounds, ctx, res) in expected {
            let r = role(name).unwrap();
            assert_eq!(r.timeout, Duration::from_secs(total), "{name}");
            assert_eq!(r.tool_timeout, Duration::from_secs(tool), "{name}");
            assert_eq!(r.max_tool_rounds, rounds, "{name}");
            assert_eq!(r.context_budget_tokens, ctx, "{name}");
            assert_eq!(r.result_budget_chars, res, "{name}");
            assert_eq!(r.delegate_tool, format!("delegate_to_{name}"));
        }
        assert!(role("task").is_none());
    }

    #[test]
    fn whitelists_never_hold_update_portfolio_nor_delegation() {
        for r in &ROLES {
            assert!(!r.allows("update_portfolio"), "{}", r.name);
            assert!(!r.allows("record_fill"), "{}", r.name);
            assert!(
                r.tools.iter().all(|t| !t.starts_with("delegate_")),
                "{}",
                r.name
            );
            // fallbacks are direct tools the parent has, never another delegation
            assert!(r.fallback_tools.iter().all(|t| !t.starts_with("delegate_")));
        }
        assert!(
            !role("research")
                .unwrap()
                .allows("evaluate_recommendation_events")
        );
        assert!(
            role("trading")
                .unwrap()
                .allows("generate_strategy_decision")
        );
        assert!(!role("analysis").unwrap().allows("screen_stocks"));
    }

    #[test]
    fn prompts_are_chinese_and_carry_role_rules() {
        assert!(
            role("research")
                .unwrap()
                .system_prompt()
                .contains("不给买卖建议")
        );
        assert!(
            role("analysis")
                .unwrap()
                .system_prompt()
                .contains("candidate_lane")
        );
        let trading = role("trading").unwrap().system_prompt();
        assert!(trading.contains("止损") && trading.contains("绝不声称已经执行"));
        for r in &ROLES {
            assert!(r.system_prompt().starts_with("# 工作方式"));
        }
    }

    #[test]
    fn whitelists_and_fallbacks_are_exactly_seed_11_07() {
        // A tool added to or dropped from a role fails here (seed 11_07 is the authority,
        // plus annotate_chart in research and analysis).
        let exact = |name: &str| {
            let r = role(name).unwrap();
            (r.tools.to_vec(), r.fallback_tools.to_vec())
        };
        assert_eq!(
            exact("research"),
            (
                vec![
                    "search_stock_by_name",
                    "analyze_stock",
                    "get_market_overview",
                    "get_market_history",
                    "query_history",
                    "screen_stocks",
                    "run_backtest",
                    "check_background_tasks",
                    "annotate_chart",
                ],
                vec![
                    "get_market_overview",
                    "query_history",
                    "check_background_tasks"
                ],
            )
        );
        assert_eq!(
            exact("analysis"),
            (
                vec![
                    "analyze_stock",
                    "portfolio",
                    "get_market_overview",
                    "get_market_history",
                    "generate_ai_report",
                    "annotate_chart",
                ],
                vec!["analyze_stock", "portfolio", "get_market_overview"],
            )
        );
        assert_eq!(
            exact("trading"),
            (
                vec![
                    "portfolio",
                    "generate_strategy_decision",
                    "analyze_stock",
                    "get_market_overview",
                    "get_market_history",
                ],
                vec![
                    "portfolio",
                    "generate_strategy_decision",
                    "get_market_overview"
                ],
            )
        );
        let names: Vec<&str> = ROLES.iter().map(|r| r.name).collect();
        assert_eq!(names, ["research", "analysis", "trading"]);
    }

    /// The snake_case words of a text (tool and field names).
    fn identifiers(text: &str) -> Vec<&str> {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| w.contains('_'))
            .collect()
    }

    #[test]
    fn every_tool_a_prompt_names_is_one_the_role_may_call() {
        // Every tool name any role, fallback or the parent has that a prompt could name.
        let mut tools: Vec<&str> = ROLES
            .iter()
            .flat_map(|r| r.tools.iter().chain(r.fallback_tools).copied())
            .chain(ROLES.iter().map(|r| r.delegate_tool))
            .chain(["update_portfolio", "check_background_tasks", "portfolio"])
            .collect();
        tools.sort_unstable();
        tools.dedup();
        for r in &ROLES {
            let prompt = r.system_prompt();
            let words: Vec<&str> = prompt
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .collect();
            for t in &tools {
                if words.contains(t) {
                    assert!(
                        r.allows(t),
                        "the {} prompt names {t}, outside its whitelist",
                        r.name
                    );
                }
            }
        }
        // The background rule everyone shares names no tool.
        assert!(identifiers(PLAN_PREFIX).iter().all(|w| *w == "task_id"));
    }

    #[test]
    fn the_analysis_prompt_names_the_fields_it_asks_to_quote() {
        let prompt = role("analysis").unwrap().system_prompt();
        for field in ANALYSIS_VERBATIM_FIELDS {
            assert!(prompt.contains(field), "{field}");
        }
        // and no field outside that list (candidate_theme/_phase/_role were never returned)
        for word in identifiers(&prompt) {
            assert!(
                ANALYSIS_VERBATIM_FIELDS.contains(&word)
                    || role("analysis").unwrap().allows(word)
                    || word == "task_id",
                "{word}"
            );
        }
    }

    /// Compares a prompt with its golden file under `src/subagents/snapshots`, or
    /// rewrites the file when `UPDATE_PROMPTS` is set (then review the diff).
    fn assert_snapshot(file: &str, actual: &str) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/subagents/snapshots")
            .join(file);
        if std::env::var_os("UPDATE_PROMPTS").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, actual).unwrap();
            return;
        }
        let expected = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_PROMPTS=1 writes it)", path.display()));
        assert_eq!(
            actual, expected,
            "{file} changed: review, then rerun with UPDATE_PROMPTS=1"
        );
    }

    #[test]
    fn prompt_snapshots() {
        for r in &ROLES {
            let description = crate::subagents::delegate_tools()
                .into_iter()
                .find(|t| t.spec().name == r.delegate_tool)
                .map(|t| t.schema().description.clone())
                .unwrap();
            let text = format!(
                "# {} system prompt\n\n{}\n# {} description (shown to the main agent)\n\n{}\n",
                r.name,
                r.system_prompt(),
                r.delegate_tool,
                description
            );
            assert_snapshot(&format!("{}.md", r.name), &text);
        }
    }
}
