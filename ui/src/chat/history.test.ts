import { describe, expect, it } from "vitest";
import type { HistoryMessage, RuntimeEvent } from "../bindings";
import { historyItems } from "./history";
import { replay, type ToolCard } from "./reducer";
import { TOOL_DISPLAY_NAMES, toolDisplayName, toolErrorText } from "./toolNames";

const denied = '{"code":"not_approved","error":"用户拒绝执行此操作 [update_portfolio]"}';

const msgs: HistoryMessage[] = [
  { seq: 1, message: { role: "user", content: "把资金改成 9000" }, interrupted: false, skill: null, task_notice: null, approval_notice: null },
  {
    seq: 2,
    message: {
      role: "assistant",
      content: "",
      tool_calls: [
        { id: "c1", name: "update_portfolio", args: { action: "set_cash", free_cash: 9000 } },
        { id: "c2", name: "portfolio", args: { mode: "view" } },
        { id: "c3", name: "some_future_tool", args: {} },
      ],
    },
    interrupted: false,
    skill: null,
    task_notice: null, approval_notice: null,
  },
  { seq: 3, message: { role: "tool", tool_call_id: "c1", name: "update_portfolio", content: denied, is_error: true }, interrupted: false, skill: null, task_notice: null, approval_notice: null },
  { seq: 4, message: { role: "tool", tool_call_id: "c2", name: "portfolio", content: '{"free_cash":1000,"positions":[]}' }, interrupted: false, skill: null, task_notice: null, approval_notice: null },
  { seq: 5, message: { role: "tool", tool_call_id: "c3", name: "some_future_tool", content: "plain failure text", is_error: true }, interrupted: false, skill: null, task_notice: null, approval_notice: null },
];

describe("a skill's message", () => {
  it("shows what was typed, with the skill and the expansion the model got", () => {
    const items = historyItems([
      {
        message: { role: "user", content: "执行持仓全面体检：\n1. 调用 portfolio\n\n[当前北京时间：2026-12-01 09:00（星期二，UTC+8）]" },
        interrupted: false,
        skill: { name: "checkup", builtin: true, typed: "/checkup 000001" },
      },
    ]);
    expect(items[0]).toEqual({
      kind: "user",
      id: "h-0",
      seq: 1,
      forkBefore: 0,
      text: "/checkup 000001",
      interrupted: false,
      skill: { name: "checkup", expansion: "执行持仓全面体检：\n1. 调用 portfolio" },
    });
  });
});

describe("message ids", () => {
  it("carry each stored seq, and a user message the seq it is edited from (the one before it)", () => {
    const items = historyItems([
      { seq: 7, message: { role: "user", content: "first" }, interrupted: false, skill: null, task_notice: null, approval_notice: null },
      { seq: 8, message: { role: "assistant", content: "answer" }, interrupted: false, skill: null, task_notice: null, approval_notice: null },
      { seq: 9, message: { role: "user", content: "second" }, interrupted: false, skill: null, task_notice: null, approval_notice: null },
    ]);
    expect(items.map((i) => (i.kind === "user" ? [i.kind, i.seq, i.forkBefore] : [i.kind, i.kind === "tool" ? null : i.seq]))).toEqual([
      ["user", 7, 0],
      ["answer", 8],
      ["user", 9, 8],
    ]);
  });
});

describe("reopened tool cards", () => {
  const cards = historyItems(msgs).filter((i): i is ToolCard => i.kind === "tool");

  it("use the display names live events use, and the raw name for unknown tools", () => {
    expect(cards.map((c) => [c.name, c.displayName])).toEqual([
      ["update_portfolio", "调仓操作"],
      ["portfolio", "持仓"],
      ["some_future_tool", "some_future_tool"],
    ]);
  });

  it("show a tool error's text, not the stored JSON", () => {
    expect(cards[0]).toMatchObject({ status: "error", error: "用户拒绝执行此操作 [update_portfolio]" });
    expect(cards[1]).toMatchObject({ status: "ok", error: null, result: { free_cash: 1000, positions: [] } });
    expect(cards[2]).toMatchObject({ status: "error", error: "plain failure text" });
  });

  it("match a live card for the same call", () => {
    const live = replay([
      { type: "tool_calls", calls: [{ id: "c1", name: "update_portfolio", args: {} }], discard_text: false },
      { type: "tool_start", id: "c1", name: "update_portfolio", display_name: "调仓操作", args: {} },
      { type: "tool_error", id: "c1", name: "update_portfolio", error: "用户拒绝执行此操作 [update_portfolio]" },
    ] as RuntimeEvent[]);
    const card = live.items[0] as ToolCard;
    expect([card.displayName, card.error]).toEqual([cards[0].displayName, cards[0].error]);
  });
});

describe("toolNames", () => {
  it("covers every tool the runtime registers", () => {
    expect(TOOL_DISPLAY_NAMES).toEqual({
      search_stock_by_name: "搜索股票",
      analyze_stock: "个股分析",
      portfolio: "持仓",
      get_market_overview: "大盘水温",
      get_market_history: "大盘回看",
      get_market_map: "市场情绪",
      size_position: "仓位计算",
      update_portfolio: "调仓操作",
      record_fill: "记录成交",
      annotate_chart: "图表标注",
      query_history: "历史查询",
      check_background_tasks: "任务状态",
      screen_stocks: "全市场扫描",
      run_backtest: "策略回测",
      generate_ai_report: "AI 研报",
      generate_strategy_decision: "攻防决策",
      delegate_to_research: "研究 agent",
      delegate_to_analysis: "分析 agent",
      delegate_to_trading: "交易 agent",
      exec_command: "执行命令",
      read_file: "读取文件",
      write_file: "写入文件",
      web_fetch: "网页抓取",
      sync_market: "全市场同步",
      import_bars: "导入行情 CSV",
    });
    expect(toolDisplayName("toString")).toBe("toString");
  });

  it("reads the error the way the runtime's error_text does", () => {
    expect(toolErrorText('{"error":"超时","code":"tool_error"}')).toBe("超时");
    expect(toolErrorText('{"error":{"detail":1},"code":"x"}')).toBe('{"detail":1}');
    expect(toolErrorText('{"code":"x"}')).toBe('{"code":"x"}');
    expect(toolErrorText("[1,2]")).toBe("[1,2]");
    expect(toolErrorText("not json")).toBe("not json");
  });

  it("names a pending live card before tool_start arrives", () => {
    const v = replay([
      { type: "tool_calls", calls: [{ id: "a", name: "get_market_overview", args: {} }], discard_text: false },
    ] as RuntimeEvent[]);
    expect((v.items[0] as ToolCard).displayName).toBe("大盘水温");
  });
});

describe("background-task notifications", () => {
  it("are a system item carrying their stored notice, never the user's words nor the prompt text", async () => {
    const { historyItems } = await import("./history");
    // The text the model read says "completed"; the stored notice (what is shown) says failed.
    const note = "[SYSTEM NOTIFICATION - NOT USER INPUT]\n<task-notification>\n<tool-name>run_backtest</tool-name>\n<status>completed</status>";
    const notice = { task_id: "bg_1_run_backtest", tool_name: "run_backtest", display_name: "策略回测", outcome: "failed", summary: null, error: "数据缺失" } as const;
    const approval = { request_id: "call_1", tool_name: "update_portfolio", display_name: "调仓", status: "denied", decided_by: { type: "app" }, summary: null, reason: "不调" } as const;
    const items = historyItems([
      { message: { role: "user", content: "回测", origin: "user" }, interrupted: false, skill: null, task_notice: null, approval_notice: null },
      { message: { role: "user", content: note, origin: "system_notification" }, interrupted: false, skill: null, task_notice: notice },
      { message: { role: "user", content: note, origin: "system_notification" }, interrupted: false, skill: null, task_notice: null, approval_notice: null },
      { message: { role: "user", content: note, origin: "system_notification" }, interrupted: false, skill: null, task_notice: null, approval_notice: approval },
    ] as never);
    expect(items.map((i) => i.kind)).toEqual(["user", "system", "system", "system"]);
    expect(items[1]).toMatchObject({ notice, approval: null });
    // Stored before notices were typed: no notice, and nothing read from the text.
    expect(items[2]).toMatchObject({ notice: null, approval: null });
    // A decided inbox call: its approval notice.
    expect(items[3]).toMatchObject({ notice: null, approval });
  });
});
