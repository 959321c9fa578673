//! `wyckoff eval`: the agent against a versioned task set over the bundled bars.
//!
//! `wyckoff eval [--model ID] [--tasks FILTER] [--task-file PATH] [--report PATH] [--json]`
//!
//! Each task is one `wyckoff run --json --approve never` turn in a new conversation of the
//! data home (so any configured model answers it as a user would be answered), then:
//! - its deterministic checks on the final answer — a number within a tolerance, the
//!   engine's label quoted, a date, the codes of a screen, a required refusal — whose
//!   expected values the engine computes now from the same bars (a `fact` is a tool's answer
//!   at a JSON pointer; a `const` is a number the prompt states), never typed in;
//! - the answer's grounding (from the `done` event): how many of its figures came from the
//!   turn's data. A task passes when every check passes and it states no unsourced price
//!   and no invented code.
//!
//! Exit status: 0 every task passed, 1 some failed, 2 bad input (a task file that does not
//! parse, a filter matching nothing).

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};

use anyhow::Context;
use clap::Args;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use wyckoff_protocol::Grounding;
use wyckoff_session::Desk;
use wyckoff_session::domain::agent::ProgressHandle;

/// The task set shipped with the binary (`crates/cli/eval/tasks.v1.json`).
const BUILTIN: &str = include_str!("../eval/tasks.v1.json");

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The model to evaluate: a model entry id from the settings (default: the main model).
    #[arg(long, value_name = "ID")]
    model: Option<String>,
    /// Only tasks whose id or category contains one of these comma-separated words.
    #[arg(long, value_name = "FILTER")]
    tasks: Option<String>,
    /// A task file to use instead of the built-in set.
    #[arg(long, value_name = "PATH")]
    task_file: Option<PathBuf>,
    /// Also write the full report (every task's transcript) as JSON to this file.
    #[arg(long, value_name = "PATH")]
    report: Option<PathBuf>,
    /// Print the report as JSON (with transcripts) instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Deserialize)]
struct TaskSet {
    version: u32,
    tasks: Vec<Task>,
}

#[derive(Debug, Clone, Deserialize)]
struct Task {
    id: String,
    lang: String,
    category: String,
    prompt: String,
    checks: Vec<Check>,
    #[serde(default)]
    min_tool_calls: usize,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Check {
    /// A number in the answer within `tolerance` of the value (signs ignored: 「下跌
    /// 3.2%」 states -3.2).
    Number { value: ValueSpec, tolerance: f64 },
    /// The value's text (the engine's label, emoji aside) quoted in the answer.
    Text { value: ValueSpec },
    /// The value's date in the answer, in any common writing.
    Date { value: ValueSpec },
    /// The codes of an array's items (`field` of each, the first `top`): all in the
    /// answer, and no other code than those and the prompt's.
    Codes {
        value: ValueSpec,
        field: String,
        top: usize,
    },
    /// The answer declines (no data, not allowed, needs approval) and, when
    /// `write_tool` is named, that tool wrote nothing.
    Refusal {
        #[serde(default)]
        write_tool: Option<String>,
    },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ValueSpec {
    /// The engine's answer for `tool` with `args`, at JSON pointer `pointer`.
    Fact {
        tool: FactTool,
        args: Value,
        pointer: String,
    },
    /// A number the prompt states.
    Const { value: f64 },
    Op {
        op: Op,
        a: Box<ValueSpec>,
        b: Box<ValueSpec>,
    },
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum FactTool {
    Analyze,
    Screen,
    Backtest,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Op {
    Sub,
    Add,
    Mul,
    Div,
    /// (a − b) / b × 100
    PctChange,
}

/// One check's outcome.
#[derive(Debug, Serialize)]
struct CheckResult {
    check: &'static str,
    /// What the engine says the answer should hold.
    expected: Value,
    passed: bool,
    detail: String,
}

/// The grounding of one answer, summed up.
#[derive(Debug, Default, Serialize)]
struct GroundingScore {
    sourced: u32,
    derived: u32,
    unsupported: u32,
    invented_codes: u32,
    /// Unsupported figures as written.
    unsupported_figures: Vec<String>,
    /// An unsourced price or an invented code: fails the task.
    flagged: bool,
}

#[derive(Debug, Serialize)]
struct TaskResult {
    id: String,
    lang: String,
    category: String,
    prompt: String,
    passed: bool,
    checks: Vec<CheckResult>,
    grounding: GroundingScore,
    tool_calls: Vec<String>,
    answer: String,
    /// Every event of the turn, as `wyckoff run --json` printed it.
    transcript: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

#[derive(Debug, Serialize)]
struct Summary {
    task_set_version: u32,
    model: Option<String>,
    tasks: usize,
    passed: usize,
    failed: usize,
    sourced: u32,
    derived: u32,
    unsupported: u32,
    invented_codes: u32,
    /// Sourced and derived figures over all figures, in percent (100 when none).
    grounding_pct: f64,
}

#[derive(Debug, Serialize)]
struct Report {
    summary: Summary,
    tasks: Vec<TaskResult>,
}

pub fn run(args: EvalArgs) -> anyhow::Result<ExitCode> {
    let (source, text) = match &args.task_file {
        Some(p) => (
            p.display().to_string(),
            std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?,
        ),
        None => ("built-in tasks.v1.json".to_owned(), BUILTIN.to_owned()),
    };
    let set: TaskSet = match serde_json::from_str(&text) {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "wyckoff: {source}: line {} column {}: {e}",
                e.line(),
                e.column()
            );
            return Ok(ExitCode::from(2));
        }
    };
    let tasks = select(&set.tasks, args.tasks.as_deref());
    if tasks.is_empty() {
        eprintln!(
            "wyckoff: no task matches `{}` ({} tasks in {source})",
            args.tasks.as_deref().unwrap_or(""),
            set.tasks.len()
        );
        return Ok(ExitCode::from(2));
    }
    // Every expected value first, from the engine over the data home's bars.
    let facts = crate::market::runtime()?.block_on(compute_facts(&tasks))?;
    let exe = std::env::current_exe().context("finding the wyckoff binary")?;
    let mut results = Vec::new();
    for task in &tasks {
        let r = run_task(&exe, task, args.model.as_deref(), &facts);
        if !args.json {
            println!("{}", task_line(&r));
        }
        results.push(r);
    }
    let report = Report {
        summary: summarize(set.version, args.model.clone(), &results),
        tasks: results,
    };
    if let Some(path) = &args.report {
        let json = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, json).with_context(|| format!("writing {}", path.display()))?;
    }
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!("{}", summary_line(&report.summary));
    }
    Ok(if report.summary.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Tasks whose id or category contains one of the filter's comma-separated words.
fn select(tasks: &[Task], filter: Option<&str>) -> Vec<Task> {
    let words: Vec<&str> = filter
        .map(|f| {
            f.split(',')
                .map(str::trim)
                .filter(|w| !w.is_empty())
                .collect()
        })
        .unwrap_or_default();
    tasks
        .iter()
        .filter(|t| words.is_empty() || words.iter().any(|w| t.id.contains(w) || t.category == *w))
        .cloned()
        .collect()
}

/// The key of a fact's tool answer.
fn fact_key(tool: FactTool, args: &Value) -> String {
    format!("{tool:?}:{args}")
}

fn collect_facts<'a>(v: &'a ValueSpec, out: &mut Vec<(FactTool, &'a Value)>) {
    match v {
        ValueSpec::Fact { tool, args, .. } => out.push((*tool, args)),
        ValueSpec::Const { .. } => {}
        ValueSpec::Op { a, b, .. } => {
            collect_facts(a, out);
            collect_facts(b, out);
        }
    }
}

/// The engine's answer for every (tool, args) the tasks refer to, each computed once.
async fn compute_facts(tasks: &[Task]) -> anyhow::Result<HashMap<String, Result<Value, String>>> {
    let desk = crate::market::desk().await?;
    let mut out = HashMap::new();
    for task in tasks {
        let mut wanted = Vec::new();
        for c in &task.checks {
            match c {
                Check::Number { value, .. }
                | Check::Text { value }
                | Check::Date { value }
                | Check::Codes { value, .. } => collect_facts(value, &mut wanted),
                Check::Refusal { .. } => {}
            }
        }
        for (tool, args) in wanted {
            if let std::collections::hash_map::Entry::Vacant(slot) = out.entry(fact_key(tool, args))
            {
                slot.insert(fact(&desk, tool, args).await);
            }
        }
    }
    desk.close().await;
    Ok(out)
}

async fn fact(desk: &Desk, tool: FactTool, args: &Value) -> Result<Value, String> {
    let silent = ProgressHandle::silent();
    match tool {
        FactTool::Analyze => desk.analyze(args).await.map_err(|e| e.to_string()),
        FactTool::Screen => desk
            .screen(args, &silent)
            .await
            .map(|(_, json)| json)
            .map_err(|e| e.to_string()),
        FactTool::Backtest => desk
            .backtest(args, &silent)
            .await
            .map_err(|e| e.to_string()),
    }
}

/// A value spec's value: the fact at its pointer, a constant, or an operation.
fn resolve(v: &ValueSpec, facts: &HashMap<String, Result<Value, String>>) -> Result<Value, String> {
    match v {
        ValueSpec::Fact {
            tool,
            args,
            pointer,
        } => {
            let answer = facts
                .get(&fact_key(*tool, args))
                .ok_or_else(|| "fact not computed".to_owned())?
                .as_ref()
                .map_err(|e| format!("the engine failed: {e}"))?;
            answer
                .pointer(pointer)
                .filter(|v| !v.is_null())
                .cloned()
                .ok_or_else(|| format!("the engine's {tool:?} answer has nothing at {pointer}"))
        }
        ValueSpec::Const { value } => Ok(Value::from(*value)),
        ValueSpec::Op { op, a, b } => {
            let num = |v: &ValueSpec| {
                resolve(v, facts)?
                    .as_f64()
                    .ok_or_else(|| "not a number".to_owned())
            };
            let (a, b) = (num(a)?, num(b)?);
            let r = match op {
                Op::Sub => a - b,
                Op::Add => a + b,
                Op::Mul => a * b,
                Op::Div if b != 0.0 => a / b,
                Op::PctChange if b != 0.0 => (a - b) / b * 100.0,
                Op::Div | Op::PctChange => return Err("division by zero".to_owned()),
            };
            Ok(Value::from(r))
        }
    }
}

/// Runs the task's turn through `wyckoff run --json` and checks the answer.
fn run_task(
    exe: &std::path::Path,
    task: &Task,
    model: Option<&str>,
    facts: &HashMap<String, Result<Value, String>>,
) -> TaskResult {
    let mut cmd = Command::new(exe);
    cmd.args(["run", "--json", "--approve", "never"]);
    if let Some(m) = model {
        cmd.args(["--model", m]);
    }
    cmd.arg(&task.prompt)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut result = TaskResult {
        id: task.id.clone(),
        lang: task.lang.clone(),
        category: task.category.clone(),
        prompt: task.prompt.clone(),
        passed: false,
        checks: Vec::new(),
        grounding: GroundingScore::default(),
        tool_calls: Vec::new(),
        answer: String::new(),
        transcript: Vec::new(),
        error: None,
    };
    let out = match cmd.output() {
        Ok(o) => o,
        Err(e) => {
            result.error = Some(format!("could not run wyckoff run: {e}"));
            return result;
        }
    };
    result.transcript = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let mut grounding: Option<Grounding> = None;
    let mut wrote = Vec::new();
    for e in &result.transcript {
        match e["type"].as_str() {
            Some("tool_start") => {
                result
                    .tool_calls
                    .push(e["name"].as_str().unwrap_or_default().to_owned());
            }
            Some("tool_result") => wrote.push(e["name"].as_str().unwrap_or_default().to_owned()),
            Some("done") => {
                result.answer = e["text"].as_str().unwrap_or_default().to_owned();
                grounding = e
                    .get("grounding")
                    .and_then(|g| serde_json::from_value(g.clone()).ok());
            }
            Some("turn_failed") => {
                result.error = Some(format!(
                    "turn failed: {}",
                    e["message"].as_str().unwrap_or_default()
                ));
            }
            _ => {}
        }
    }
    if result.error.is_none() && !out.status.success() {
        result.error = Some(format!(
            "wyckoff run exited with {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    if let Some(g) = &grounding {
        result.grounding = GroundingScore {
            sourced: g.sourced,
            derived: g.derived,
            unsupported: g.unsupported,
            invented_codes: g.invented_codes,
            unsupported_figures: g.unsupported_claims().map(|c| c.text.clone()).collect(),
            flagged: g.needs_correction(),
        };
    }
    for c in &task.checks {
        result
            .checks
            .push(check(c, &result.answer, &task.prompt, &wrote, facts));
    }
    if task.min_tool_calls > 0 {
        let n = result.tool_calls.len();
        result.checks.push(CheckResult {
            check: "tool_calls",
            expected: Value::from(task.min_tool_calls),
            passed: n >= task.min_tool_calls,
            detail: format!("{n} tool calls"),
        });
    }
    result.passed = result.error.is_none()
        && result.checks.iter().all(|c| c.passed)
        && !result.grounding.flagged;
    result
}

fn check(
    c: &Check,
    answer: &str,
    prompt: &str,
    wrote: &[String],
    facts: &HashMap<String, Result<Value, String>>,
) -> CheckResult {
    let unavailable = |check, e: String| CheckResult {
        check,
        expected: Value::Null,
        passed: false,
        detail: format!("expected value unavailable: {e}"),
    };
    match c {
        Check::Number { value, tolerance } => {
            let expected = match resolve(value, facts).map(|v| v.as_f64()) {
                Ok(Some(x)) => x,
                Ok(None) => return unavailable("number", "not a number".into()),
                Err(e) => return unavailable("number", e),
            };
            let found = numbers_in(answer)
                .into_iter()
                .find(|n| (n - expected.abs()).abs() <= *tolerance + 1e-9);
            CheckResult {
                check: "number",
                expected: Value::from(expected),
                passed: found.is_some(),
                detail: match found {
                    Some(n) => format!("found {n} (±{tolerance})"),
                    None => format!("no number within ±{tolerance} of {expected}"),
                },
            }
        }
        Check::Text { value } => {
            let expected = match resolve(value, facts) {
                Ok(Value::String(s)) => s,
                Ok(other) => other.to_string(),
                Err(e) => return unavailable("text", e),
            };
            let core = label_core(&expected);
            let passed = !core.is_empty() && answer.contains(&core);
            CheckResult {
                check: "text",
                detail: if passed {
                    format!("quotes {core}")
                } else {
                    format!("does not quote {core}")
                },
                expected: Value::String(expected),
                passed,
            }
        }
        Check::Date { value } => {
            let expected = match resolve(value, facts) {
                Ok(Value::String(s)) => s,
                Ok(other) => other.to_string(),
                Err(e) => return unavailable("date", e),
            };
            let passed = date_writings(&expected).iter().any(|w| answer.contains(w));
            CheckResult {
                check: "date",
                detail: if passed {
                    "the date is stated".into()
                } else {
                    "the date is not stated".into()
                },
                expected: Value::String(expected),
                passed,
            }
        }
        Check::Codes { value, field, top } => {
            let items = match resolve(value, facts) {
                Ok(Value::Array(a)) => a,
                Ok(_) => return unavailable("codes", "not a list".into()),
                Err(e) => return unavailable("codes", e),
            };
            let expected: Vec<String> = items
                .iter()
                .filter_map(|i| i.get(field).and_then(Value::as_str))
                .take(*top)
                .map(str::to_owned)
                .collect();
            let said = six_digit_runs(answer);
            let asked = six_digit_runs(prompt);
            let missing: Vec<&String> = expected.iter().filter(|c| !said.contains(c)).collect();
            let extra: Vec<&String> = said
                .iter()
                .filter(|c| !expected.contains(c) && !asked.contains(c))
                .collect();
            CheckResult {
                check: "codes",
                passed: missing.is_empty() && extra.is_empty(),
                detail: format!("missing {missing:?}, not in the screen {extra:?}"),
                expected: Value::from(expected),
            }
        }
        Check::Refusal { write_tool } => {
            let declined = REFUSAL_WORDS
                .iter()
                .any(|w| answer.to_lowercase().contains(w));
            let written = write_tool
                .as_ref()
                .is_some_and(|t| wrote.iter().any(|w| w == t));
            CheckResult {
                check: "refusal",
                expected: Value::Bool(true),
                passed: declined && !written,
                detail: match (declined, written) {
                    (_, true) => "the write tool ran".into(),
                    (false, _) => "the answer does not decline".into(),
                    (true, false) => "declined".into(),
                },
            }
        }
    }
}

/// Words of an answer that declines: no data, not allowed, needs approval.
const REFUSAL_WORDS: &[&str] = &[
    "无法",
    "不能",
    "未找到",
    "找不到",
    "没有找到",
    "不存在",
    "没有数据",
    "无数据",
    "暂无数据",
    "缺少",
    "需要批准",
    "需要你的批准",
    "未批准",
    "被拒绝",
    "拒绝",
    "未执行",
    "cannot",
    "can't",
    "unable",
    "not found",
    "no data",
    "unknown",
    "denied",
    "not allowed",
    "approval",
    "not approved",
];

/// A label without its decoration: `🔴危险` → `危险`.
fn label_core(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-'))
        .collect()
}

/// The ways an answer may write `2020-06-16`.
fn date_writings(date: &str) -> Vec<String> {
    let parts: Vec<&str> = date.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return vec![date.to_owned()];
    };
    let (mi, di) = (
        m.trim_start_matches('0').to_owned(),
        d.trim_start_matches('0').to_owned(),
    );
    vec![
        date.to_owned(),
        format!("{y}{m}{d}"),
        format!("{y}/{m}/{d}"),
        format!("{y}年{mi}月{di}日"),
        format!("{y}年{m}月{d}日"),
    ]
}

/// Every number written in `text` (absolute values; thousands separators read).
fn numbers_in(text: &str) -> Vec<f64> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let mut s = String::new();
        while i < chars.len()
            && (chars[i].is_ascii_digit()
                || (matches!(chars[i], '.' | ',')
                    && chars.get(i + 1).is_some_and(char::is_ascii_digit)))
        {
            if chars[i] != ',' {
                s.push(chars[i]);
            }
            i += 1;
        }
        if let Ok(v) = s.parse::<f64>() {
            // 1.23万 / 1.23亿 as written and in full.
            out.push(v);
            let unit = if chars.get(i) == Some(&' ') { i + 1 } else { i };
            match chars.get(unit) {
                Some('万') => out.push(v * 1e4),
                Some('亿') => out.push(v * 1e8),
                _ => {}
            }
        }
    }
    out
}

/// Runs of exactly six ASCII digits (stock codes as an answer writes them).
fn six_digit_runs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut run = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() {
            run.push(c);
        } else {
            if run.len() == 6 && !out.contains(&run) {
                out.push(run.clone());
            }
            run.clear();
        }
    }
    out
}

fn summarize(version: u32, model: Option<String>, results: &[TaskResult]) -> Summary {
    let passed = results.iter().filter(|r| r.passed).count();
    let sum = |f: fn(&GroundingScore) -> u32| results.iter().map(|r| f(&r.grounding)).sum::<u32>();
    let (sourced, derived, unsupported) = (
        sum(|g| g.sourced),
        sum(|g| g.derived),
        sum(|g| g.unsupported),
    );
    let all = sourced + derived + unsupported;
    Summary {
        task_set_version: version,
        model,
        tasks: results.len(),
        passed,
        failed: results.len() - passed,
        sourced,
        derived,
        unsupported,
        invented_codes: sum(|g| g.invented_codes),
        grounding_pct: if all == 0 {
            100.0
        } else {
            (f64::from(sourced + derived) * 1000.0 / f64::from(all)).round() / 10.0
        },
    }
}

/// `PASS close-000001-zh` or `FAIL …: number: no number within ±0.006 of 12.89; unsourced 「36.10 元」`.
fn task_line(r: &TaskResult) -> String {
    let mut line = format!("{} {}", if r.passed { "PASS" } else { "FAIL" }, r.id);
    let mut why: Vec<String> = r
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| format!("{}: {}", c.check, c.detail))
        .collect();
    if let Some(e) = &r.error {
        why.push(e.clone());
    }
    if !r.grounding.unsupported_figures.is_empty() {
        why.push(format!(
            "unsourced {}",
            r.grounding
                .unsupported_figures
                .iter()
                .map(|f| format!("「{f}」"))
                .collect::<String>()
        ));
    }
    if !why.is_empty() {
        line.push_str(": ");
        line.push_str(&why.join("; "));
    }
    line
}

fn summary_line(s: &Summary) -> String {
    format!(
        "eval v{}: {}/{} passed; numbers: {} sourced, {} derived, {} unsupported ({} invented codes), grounding {}%",
        s.task_set_version,
        s.passed,
        s.tasks,
        s.sourced,
        s.derived,
        s.unsupported,
        s.invented_codes,
        s.grounding_pct
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_set_parses_with_enough_tasks_in_both_languages() {
        let set: TaskSet = serde_json::from_str(BUILTIN).unwrap();
        assert_eq!(set.version, 1);
        assert!(set.tasks.len() >= 60, "{}", set.tasks.len());
        for lang in ["zh", "en"] {
            assert!(set.tasks.iter().filter(|t| t.lang == lang).count() >= 20);
        }
        for cat in [
            "diagnosis",
            "screen",
            "backtest",
            "portfolio",
            "refusal",
            "multi_step",
        ] {
            assert!(set.tasks.iter().any(|t| t.category == cat), "{cat}");
        }
        let mut ids: Vec<&str> = set.tasks.iter().map(|t| t.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), set.tasks.len(), "ids are unique");
    }

    #[test]
    fn numbers_dates_and_labels_as_answers_write_them() {
        assert_eq!(
            numbers_in("收盘 12.89 元，跌 -3.2%，额 1,234.5 万"),
            [12.89, 3.2, 1234.5, 12_345_000.0]
        );
        assert!(date_writings("2020-06-16").contains(&"2020年6月16日".to_owned()));
        assert_eq!(label_core("🔴危险"), "危险");
        assert_eq!(
            six_digit_runs("000001 与 601318，123 和 1234567"),
            ["000001", "601318"]
        );
    }

    #[test]
    fn operations_on_constants() {
        let facts = HashMap::new();
        let pnl = ValueSpec::Op {
            op: Op::PctChange,
            a: Box::new(ValueSpec::Const { value: 12.0 }),
            b: Box::new(ValueSpec::Const { value: 10.0 }),
        };
        assert_eq!(resolve(&pnl, &facts).unwrap().as_f64(), Some(20.0));
    }
}
