//! The loop guard (seed 防偷懒): infers from the user's request whether this turn needs
//! a particular tool, so that a model answering from thin air is sent back to fetch the
//! real data (at most twice, then its text is kept with a warning).
//!
//! The inference is a short, explicit rule table over the user's text; the first rule
//! that matches wins. It only looks at the current user message (never at background
//! notifications or the runtime's own retry prompts).

use serde_json::{Map, Value, json};
use wyckoff_engine::codes::stock_codes;

/// Corrective retries per turn before the text is kept.
pub const MAX_RETRIES: u32 = 2;

/// A tool this turn must call before answering.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnExpectation {
    pub tool: String,
    /// Why, in words the model reads.
    pub reason: String,
    /// Arguments offered as a hint; they never block.
    pub suggested_args: Value,
    /// When set, a call only counts if this argument equals one of the values (e.g. the
    /// stock codes the user named).
    pub required_arg: Option<(String, Vec<String>)>,
}

/// Questions about concepts ("what is…", "explain…") need no data.
const EXPLANATION: &[&str] = &[
    "是什么",
    "什么意思",
    "啥意思",
    "为什么",
    "原理",
    "逻辑",
    "规则",
    "方法",
    "流程",
    "框架",
    "标准",
    "口径",
    "怎么做",
    "如何做",
    "讲讲",
    "介绍",
    "解释",
    "说明",
];
/// …unless the question is about the user's own or current data.
const CONCRETE: &[&str] = &[
    "我的",
    "我买",
    "我持",
    "账户",
    "这些",
    "这几个",
    "上述",
    "上面",
    "今天",
    "最新",
    "现在",
];
const ANALYSIS_INTENT: &[&str] = &[
    "分析",
    "诊断",
    "看看",
    "看一下",
    "看下",
    "怎么样",
    "如何",
    "走势",
    "结构",
    "阶段",
    "威科夫",
    "wyckoff",
    "能买",
    "能不能买",
    "可以买",
    "买点",
    "行情",
    "k线",
    "技术面",
    "体检",
    "健康",
    "价格",
    "基本面",
    "财报",
];
const PORTFOLIO_SUBJECT: &[&str] = &["持仓", "仓位", "持股", "我的股票", "我买的", "账户"];
const PORTFOLIO_DIAGNOSE: &[&str] = &[
    "怎么样",
    "健康",
    "体检",
    "诊断",
    "审",
    "分析",
    "风险",
    "处理",
    "去留",
    "要不要动",
];
const PORTFOLIO_VIEW: &[&str] = &[
    "看",
    "查",
    "列",
    "情况",
    "有什么",
    "有哪些",
    "有啥",
    "多少",
    "读",
];
const MARKET_SUBJECT: &[&str] = &[
    "大盘", "市场", "指数", "上证", "沪深", "a股", "盘面", "两市",
];
const MARKET_INTENT: &[&str] = &[
    "怎么样",
    "如何",
    "水温",
    "情况",
    "行情",
    "表现",
    "概况",
    "今天",
    "今日",
    "涨跌",
    "宽度",
];
const SCREEN_INTENT: &[&str] = &[
    "选股",
    "筛选",
    "筛股",
    "扫描",
    "好股票",
    "推荐股票",
    "推荐几只",
    "推荐标的",
    "买什么",
    "买哪",
];

fn any(text: &str, words: &[&str]) -> bool {
    words.iter().any(|w| text.contains(w))
}

/// The rule table. `text` is the user's message of this turn.
pub fn resolve_expectation(text: &str) -> Option<TurnExpectation> {
    let text = text.trim().to_lowercase();
    if text.is_empty() {
        return None;
    }
    if any(&text, EXPLANATION) && !any(&text, CONCRETE) {
        return None;
    }
    let codes = stock_codes(&text);

    // 1. A stock code with an analysis intent → analyze_stock on that code.
    if !codes.is_empty() && any(&text, ANALYSIS_INTENT) {
        let mode = if any(&text, &["基本面", "财报"]) {
            "fundamental"
        } else if any(&text, &["行情", "价格", "k线"])
            && !any(&text, &["诊断", "结构", "威科夫", "wyckoff"])
        {
            "price"
        } else {
            "diagnose"
        };
        return Some(TurnExpectation {
            tool: "analyze_stock".into(),
            reason: format!(
                "用户要求分析股票 {}，需要先读取真实行情数据。",
                codes.join("、")
            ),
            suggested_args: json!({"code": codes[0], "mode": mode}),
            required_arg: Some(("code".into(), codes)),
        });
    }
    // 2/3. The user's portfolio: diagnose, or just list it.
    if any(&text, PORTFOLIO_SUBJECT) {
        if any(&text, PORTFOLIO_DIAGNOSE) {
            return Some(expect(
                "portfolio",
                "持仓体检需要先读取真实持仓数据。",
                json!({"mode": "diagnose"}),
            ));
        }
        if any(&text, PORTFOLIO_VIEW) {
            return Some(expect(
                "portfolio",
                "持仓列表查询需要先读取真实持仓数据。",
                json!({"mode": "view"}),
            ));
        }
    }
    // 4. Market overview.
    if any(&text, MARKET_SUBJECT) && any(&text, MARKET_INTENT) && !any(&text, SCREEN_INTENT) {
        let breadth = any(&text, &["宽度", "涨跌家数", "上涨家数", "下跌家数"]);
        return Some(expect(
            "get_market_overview",
            "大盘/市场情况需要先读取真实指数数据。",
            json!({"include_breadth": breadth}),
        ));
    }
    // 5. Stock screening.
    if any(&text, SCREEN_INTENT) {
        return Some(expect(
            "screen_stocks",
            "真实选股请求需要先运行筛选工具。",
            json!({}),
        ));
    }
    None
}

fn expect(tool: &str, reason: &str, suggested: Value) -> TurnExpectation {
    TurnExpectation {
        tool: tool.into(),
        reason: reason.into(),
        suggested_args: suggested,
        required_arg: None,
    }
}

/// Whether the calls made so far this turn (name, args) fulfil the expectation. A
/// delegation to a sub-agent whose role may use the expected tool counts: the sub-agent
/// gathered the data (its result carries it).
pub fn is_satisfied(expectation: &TurnExpectation, used: &[(String, Value)]) -> bool {
    let delegated = used.iter().any(|(name, _)| {
        crate::subagents::role_for_tool(name).is_some_and(|r| r.allows(&expectation.tool))
    });
    delegated
        || used.iter().any(|(name, args)| {
            name == &expectation.tool
                && match &expectation.required_arg {
                    None => true,
                    Some((key, accepted)) => args
                        .get(key)
                        .map(|v| match v {
                            Value::String(s) => s.trim().to_owned(),
                            other => other.to_string(),
                        })
                        .is_some_and(|v| accepted.iter().any(|a| a == &v)),
                }
        })
}

fn chinese_name(tool: &str) -> &str {
    match tool {
        "portfolio" => "持仓数据",
        "analyze_stock" => "个股分析",
        "get_market_overview" => "大盘水温",
        "screen_stocks" => "全市场扫描",
        "generate_ai_report" => "AI 研报",
        "generate_strategy_decision" => "攻防决策",
        "run_backtest" => "回测",
        other => other,
    }
}

/// The corrective instruction injected (as an internal user message) after the model
/// answered without the required tool.
pub fn retry_prompt(expectation: &TurnExpectation, model_text: &str) -> String {
    let text = model_text.trim();
    let plan_only = text.contains("计划")
        || ["第一步", "首先", "然后", "接着", "1.", "1、"]
            .iter()
            .filter(|m| text.contains(*m))
            .count()
            >= 2;
    let lead = if text.is_empty() {
        "这一轮没有返回有效的工具调用。"
    } else if plan_only {
        "你刚才只给出了计划，还没有真正执行。"
    } else {
        "你刚才直接给出了文字回答，但没有先获取真实数据。"
    };
    let args = match &expectation.suggested_args {
        Value::Object(m) if !m.is_empty() => format!("（建议参数：{}）", render_args(m)),
        _ => String::new(),
    };
    format!(
        "{lead}{} 现在必须先调用 `{}`{args}（{}）拿到真实数据，再继续回答。不要重复计划，直接执行。",
        expectation.reason,
        expectation.tool,
        chinese_name(&expectation.tool)
    )
}

fn render_args(m: &Map<String, Value>) -> String {
    m.iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}=\"{s}\""),
            other => format!("{k}={other}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The warning shown when the retries are used up and the text is kept anyway.
pub fn exhausted_warning(expectation: &TurnExpectation, retries: u32) -> String {
    format!(
        "模型连续 {retries} 次没有调用必需工具 `{}`（{}），以下回答可能不可靠。",
        expectation.tool,
        chinese_name(&expectation.tool)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expectation_table() {
        // (user text, expected tool or None, expected suggested mode if any)
        let cases: Vec<(&str, Option<&str>, Option<&str>)> = vec![
            (
                "帮我分析一下 600519",
                Some("analyze_stock"),
                Some("diagnose"),
            ),
            ("000001 怎么样？", Some("analyze_stock"), Some("diagnose")),
            ("看看300750最近的行情", Some("analyze_stock"), Some("price")),
            (
                "600519 的基本面如何",
                Some("analyze_stock"),
                Some("fundamental"),
            ),
            ("600519", None, None),
            ("订单号 1234567 分析一下", None, None),
            ("威科夫方法是什么", None, None),
            ("解释一下 600519 的威科夫原理", None, None),
            ("我的持仓怎么样", Some("portfolio"), Some("diagnose")),
            ("帮我看看持仓", Some("portfolio"), Some("view")),
            ("今天大盘怎么样", Some("get_market_overview"), None),
            ("A股市场宽度如何", Some("get_market_overview"), None),
            ("帮我选股", Some("screen_stocks"), None),
            ("明天买什么", Some("screen_stocks"), None),
            ("你好", None, None),
            ("", None, None),
        ];
        for (text, tool, mode) in cases {
            let got = resolve_expectation(text);
            assert_eq!(got.as_ref().map(|e| e.tool.as_str()), tool, "{text}");
            if let Some(mode) = mode {
                assert_eq!(got.unwrap().suggested_args["mode"], mode, "{text}");
            }
        }
    }

    #[test]
    fn breadth_is_suggested_when_asked() {
        let e = resolve_expectation("A股市场宽度如何").unwrap();
        assert_eq!(e.suggested_args["include_breadth"], true);
    }

    #[test]
    fn satisfaction_requires_the_named_code() {
        let e = resolve_expectation("分析 600519 和 000001").unwrap();
        let used = |name: &str, code: &str| vec![(name.to_owned(), json!({"code": code}))];
        assert!(!is_satisfied(&e, &[]));
        assert!(!is_satisfied(&e, &used("analyze_stock", "300750")));
        assert!(!is_satisfied(&e, &used("search_stock_by_name", "600519")));
        assert!(is_satisfied(&e, &used("analyze_stock", "000001")));
        let p = resolve_expectation("我的持仓怎么样").unwrap();
        assert!(is_satisfied(
            &p,
            &[("portfolio".into(), json!({"mode": "view"}))]
        ));
        // a delegation counts when the role may use the expected tool
        let task = json!({"task": "看看 600519"});
        assert!(is_satisfied(
            &e,
            &[("delegate_to_research".into(), task.clone())]
        ));
        assert!(is_satisfied(
            &p,
            &[("delegate_to_analysis".into(), task.clone())]
        ));
        assert!(!is_satisfied(&p, &[("delegate_to_research".into(), task)]));
    }

    #[test]
    fn retry_prompt_names_the_tool_and_lead() {
        let e = resolve_expectation("分析 600519").unwrap();
        let p = retry_prompt(&e, "");
        assert!(p.starts_with("这一轮没有返回有效的工具调用。"), "{p}");
        assert!(
            p.contains("`analyze_stock`") && p.contains("code=\"600519\""),
            "{p}"
        );
        assert!(retry_prompt(&e, "我的计划是先看K线").starts_with("你刚才只给出了计划"));
        assert!(retry_prompt(&e, "茅台走势不错").starts_with("你刚才直接给出了文字回答"));
    }
}
