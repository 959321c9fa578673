import { describe, expect, it } from "vitest";
import type { TaskInfo, Value } from "../bindings";
import { toolLabel } from "../chat/toolNames";
import { askAboutCandidate, elapsed, equityCurve, percent, polyline, progressLine, queuedCount, reportText, runningCount, screenRows, sortRows, suggestedText, timeframesText, upsertTask } from "./tasks";

const task = (id: string, started: string, status: TaskInfo["status"] = "running"): TaskInfo => ({
  task_id: id,
  tool_name: "screen_stocks",
  display_name: "全市场扫描",
  status,
  progress: { stage: "加载K线", detail: "", fraction: null },
  started_at: started,
});

describe("progress wording", () => {
  const layer = (n: number, input: number, passed: number): TaskInfo => ({
    ...task("s", "2026-12-03T06:00:00Z"),
    // The backend's Chinese words, which the panel replaces with its own.
    progress: { stage: `L${n} 后端`, detail: `${input} → ${passed}`, fraction: 0.5, step: { kind: "screen_layer", layer: n, input, passed } },
  });

  it("words a queued task from its status, in the page's language", () => {
    const queued = { ...task("q", "2026-12-03T06:00:00Z", "queued"), progress: { stage: "已提交", detail: "", fraction: null } };
    expect(progressLine(queued, "zh")).toBe("同时最多运行 3 个后台任务，有空位后自动开始");
    expect(progressLine(queued, "en")).toBe("At most 3 background tasks run at once; starts when one ends");
    const list = [queued, task("r", "2026-12-03T06:01:00Z")];
    expect([runningCount(list), queuedCount(list)]).toEqual([1, 1]);
  });

  it("words a sweep's combinations and a walk-forward's windows in the page's language", () => {
    const bt = (detail: string): TaskInfo => ({ ...task("b", "2026-12-03T06:00:00Z"), tool_name: "run_backtest", progress: { stage: "组合回测", detail, fraction: 0.8 } });
    expect(progressLine(bt("3/12 个组合"), "en")).toBe("3/12 combinations");
    expect(progressLine(bt("3/12 个组合"), "zh")).toBe("3/12 个组合");
    expect(progressLine(bt("第 2/5 个窗口"), "en")).toBe("window 2 of 5");
    expect(progressLine(bt("2020-03-02 (3/50)"), "en")).toBe("组合回测 2020-03-02 (3/50)");
  });

  it("words each funnel layer of a screen with its counts", () => {
    const table: [number, number, number, string, string][] = [
      [1, 5640, 4980, "L1 基础门槛：5640 → 4980", "L1 basic filters: 5640 → 4980"],
      [2, 4980, 1234, "L2 强势通道：4980 → 1234", "L2 strength channels: 4980 → 1234"],
      [3, 1234, 800, "L3 行业共振：1234 → 800", "L3 sector resonance: 1234 → 800"],
      [4, 800, 37, "L4 结构触发：800 → 37", "L4 structure triggers: 800 → 37"],
      [5, 37, 30, "L5 退出信号：37 → 30", "L5 exit signals: 37 → 30"],
    ];
    for (const [n, input, passed, zh, en] of table) {
      expect(progressLine(layer(n, input, passed), "zh")).toBe(zh);
      expect(progressLine(layer(n, input, passed), "en")).toBe(en);
    }
  });

  it("shows an untyped stage as the backend sent it", () => {
    const t = { ...task("b", "2026-12-03T06:00:00Z"), progress: { stage: "逐日回测", detail: "2024-01-02 (10/250)", fraction: 0.04 } };
    expect(progressLine(t, "en")).toBe("逐日回测 2024-01-02 (10/250)");
    expect(progressLine({ ...t, progress: { stage: "加载K线", detail: "", fraction: null } }, "zh")).toBe("加载K线");
  });
});

describe("task list", () => {
  it("keeps one row per task, newest first, replacing on change", () => {
    let list: TaskInfo[] = [];
    list = upsertTask(list, task("a", "2026-12-03T06:00:00Z"));
    list = upsertTask(list, task("b", "2026-12-03T06:05:00Z"));
    list = upsertTask(list, { ...task("a", "2026-12-03T06:00:00Z", "completed") });
    expect(list.map((t) => t.task_id)).toEqual(["b", "a"]);
    expect(list[1].status).toBe("completed");
    expect(runningCount(list)).toBe(1);
  });

  it("formats elapsed time, ticking until the task ends", () => {
    const start = "2026-12-03T06:00:00Z";
    const t0 = Date.parse(start);
    expect(elapsed(start, null, t0 + 5_000)).toBe("0:05");
    expect(elapsed(start, null, t0 + 125_000)).toBe("2:05");
    expect(elapsed(start, null, t0 + 3_725_000)).toBe("1:02:05");
    expect(elapsed(start, "2026-12-03T06:00:42Z", t0 + 999_000)).toBe("0:42");
    expect(elapsed("not a date", null, t0)).toBe("");
  });

  it("maps fractions to percent, unknown to indeterminate", () => {
    expect(percent(0.456)).toBe(46);
    expect(percent(1.7)).toBe(100);
    expect(percent(null)).toBeNull();
    expect(percent(undefined)).toBeNull();
  });
});

describe("results", () => {
  const screen = {
    as_of: "2020-06-16",
    candidates: [
      { code: "000001", name: "平安银行", channel: "主升通道", triggers: [{ kind: "Spring", score: 1.2 }], score: 1.2, stage: null, last_close: 12.3, bars_as_of: "2020-06-16" },
      { code: "600519", name: "贵州茅台", channel: "潜伏通道", triggers: [{ kind: "EVR" }, { kind: "Spring" }], score: 3.5, stage: "Accum_C", last_close: 1400.5, bars_as_of: "2020-06-15" },
      { code: "300750", name: "宁德时代", channel: "", triggers: [], score: null, stage: null, last_close: null, bars_as_of: "" },
    ],
  };

  it("reads screen candidates tolerantly and sorts them", () => {
    const rows = screenRows(screen);
    expect(rows[1].triggers).toBe("EVR+Spring");
    expect(rows[2].score).toBeNull();
    expect(sortRows(rows, "score", true).map((r) => r.code)).toEqual(["600519", "000001", "300750"]);
    expect(sortRows(rows, "score", false).map((r) => r.code)).toEqual(["000001", "600519", "300750"]);
    expect(sortRows(rows, "code", false).map((r) => r.code)).toEqual(["000001", "300750", "600519"]);
    expect(screenRows(null)).toEqual([]);
    expect(screenRows({ candidates: "nope" })).toEqual([]);
  });

  it("reads each candidate's weekly context and 60-minute check, each named by its timeframe", () => {
    const line = (timeframe: string, en: string) => ({ timeframe, zh: `${timeframe}：…`, en });
    const screen = {
      candidates: [
        {
          code: "600519",
          weekly: { trend: "up", range_low: 1, range_high: 2, position_pct: 80, ma10: 1.5, ma10_4w_ago: 1.4, weeks: 60 },
          intraday_60m: { type: "confirmed", close_in_range_pct: 90 },
          timeframes: [line("daily", "daily: Spring triggered on 2020-06-16"), line("weekly", "weekly: trend up …"), line("minutes60", "60-minute: confirmed …")],
        },
        { code: "000001", weekly: null, intraday_60m: { type: "no_minute_data" }, timeframes: [line("daily", "daily: SOS …"), "junk"] },
        // a screen saved before L4 read other timeframes
        { code: "300750" },
      ],
    } as unknown as Value;
    const [a, b, c] = screenRows(screen);
    expect([a.weekly_trend, a.intraday_60m, a.timeframe_lines.map((l) => l.timeframe)]).toEqual(["up", "confirmed", ["daily", "weekly", "minutes60"]]);
    expect(timeframesText(a, "zh")).toBe("周线上升 · 60分钟确认");
    expect(timeframesText(a, "en")).toBe("weekly up · 60m confirmed");
    expect(b.timeframe_lines).toHaveLength(1);
    expect(timeframesText(b, "en")).toBe("weekly too few weeks · 60m no minute data");
    expect(timeframesText(b, "zh")).toBe("周线不足周数 · 60分钟无分钟数据");
    expect([c.weekly_trend, c.intraday_60m, c.timeframe_lines]).toEqual(["", "", []]);
    expect(timeframesText(c, "en")).toBe("—");
  });

  it("draws the equity curve into its box", () => {
    const curve = equityCurve({ equity_curve: [{ date: "d1", equity: 100 }, { date: "d2", equity: 110 }, { date: "d3", equity: 105 }, { bad: 1 }] });
    expect(curve).toHaveLength(3);
    expect(polyline(curve, 100, 10)).toBe("0.0,10.0 50.0,0.0 100.0,5.0");
    expect(polyline(curve.slice(0, 1), 100, 10)).toBe("");
  });

  it("finds a report's Markdown", () => {
    expect(reportText({ report_text: "## 进攻" })).toBe("## 进攻");
    expect(reportText({ decision_text: "## 持仓去留" })).toBe("## 持仓去留");
    expect(reportText({ other: 1 })).toBeNull();
  });
});

describe("in the app's language", () => {
  const row = { code: "600519", name: "贵州茅台", channel: "主升通道", triggers: "SOS", score: 1, stage: "D", last_close: 1500, bars_as_of: "2020-06-16" };

  it("asks about a candidate with the figures it was picked on", () => {
    expect(askAboutCandidate(row, "zh")).toBe("分析 600519 贵州茅台（筛选候选：SOS，数据截至 2020-06-16）");
    expect(askAboutCandidate(row, "en")).toBe("Analyse 600519 贵州茅台 (screen candidate: SOS, bars as of 2020-06-16)");
  });

  it("names known tools in English, keeps the runtime's name otherwise", () => {
    expect(toolLabel("screen_stocks", "全市场扫描", "en")).toBe("Market screen");
    expect(toolLabel("screen_stocks", "全市场扫描", "zh")).toBe("全市场扫描");
    expect(toolLabel("some_new_tool", "新工具", "en")).toBe("新工具");
  });
});

describe("a screen candidate's suggested size", () => {
  const screen = {
    candidates: [
      {
        code: "000001",
        name: "平安银行",
        last_close: 13.05,
        suggested_size: {
          code: "000001",
          sizing: { shares: 700, risk_fen: 81234, risk_pct: 0.81, bound: ["现金 9000.00 元：最多 700 股"], why_none: null },
          breaches: [{ type: "positions", count: 3, limit: 2 }],
          unavailable: null,
        },
      },
      { code: "300027", name: "华谊兄弟", suggested_size: { code: "300027", sizing: { shares: 0, risk_fen: 0, risk_pct: 0, bound: [], why_none: "风险预算不足一手" }, breaches: [], unavailable: null } },
      { code: "000338", name: "潍柴动力", suggested_size: { code: "000338", sizing: null, breaches: [], unavailable: "账户没有权益" } },
      { code: "000778", name: "新兴铸管" },
    ],
  };

  it("reads shares, risk, the caps and the limits it breaks", () => {
    const [a, b, c, d] = screenRows(screen as unknown as Value);
    expect([a.suggested_shares, a.suggested_risk_fen, a.suggested_risk_pct, a.suggested_bound, a.suggested_breaches]).toEqual([700, 81234, 0.81, ["现金 9000.00 元：最多 700 股"], ["positions"]]);
    expect(suggestedText(a, "zh")).toBe("700 股 · 风险 ¥812（0.81%） · 超限: 持仓数");
    expect(suggestedText(a, "en")).toBe("700 sh · risk ¥812 (0.81%) · breaks: positions");
    expect([b.suggested_shares, b.suggested_why]).toEqual([0, "风险预算不足一手"]);
    expect(suggestedText(b, "zh")).toBe("不足一手");
    expect([c.suggested_shares, c.suggested_why, suggestedText(c, "en")]).toEqual([null, "账户没有权益", "none"]);
    // A screen without sizes (an as-of day, or no rules): nothing said.
    expect([d.suggested_shares, suggestedText(d, "zh")]).toEqual([null, "—"]);
  });
});
