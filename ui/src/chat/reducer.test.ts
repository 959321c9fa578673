import { describe, expect, it } from "vitest";
import type { RuntimeEvent } from "../bindings";
import {
  initialTurn,
  itemText,
  reduceTurn,
  replay,
  splitBlocks,
  thinkingSummary,
  type TextItem,
  type ToolCard,
  type TurnView,
} from "./reducer";
import approvalDeny from "./fixtures/approval_deny.json";
import cancelled from "./fixtures/cancelled.json";
import failed from "./fixtures/failed.json";
import memoryRecall from "./fixtures/memory_recall.json";
import retryFallback from "./fixtures/retry_fallback.json";
import textStream from "./fixtures/text_stream.json";
import toolTurn from "./fixtures/tool_turn.json";

const ev = (x: unknown) => x as RuntimeEvent[];
const texts = (v: TurnView) => v.items.filter((i): i is TextItem => i.kind === "text");
const tools = (v: TurnView) => v.items.filter((i): i is ToolCard => i.kind === "tool");

/** Replays the first `n` events only (the view mid-stream). */
const upTo = (events: RuntimeEvent[], n: number) => replay(events.slice(0, n));

describe("text streaming", () => {
  it("buffers by line and shows the live tail", () => {
    const events = ev(textStream);
    const v = upTo(events, 5); // "## 结论" with no newline yet
    const [t] = texts(v);
    expect(t.committed).toBe("");
    expect(t.tail).toBe("## 结论");
    const v2 = upTo(events, 6); // "\n\n大盘处于"
    const [t2] = texts(v2);
    expect(t2.committed).toBe("## 结论\n\n");
    expect(t2.tail).toBe("大盘处于");
    expect(v2.phase).toBe("streaming");
  });

  it("shows the first character from the first delta", () => {
    const v = reduceTurn(initialTurn(), { type: "text_delta", text: "大" });
    expect(itemText(texts(v)[0])).toBe("大");
  });

  it("ends with the final answer whole and closed", () => {
    const v = replay(ev(textStream));
    const all = texts(v);
    expect(all).toHaveLength(1);
    expect(all[0].final).toBe(true);
    expect(all[0].committed).toContain("| 量比 | 1.2 |");
    expect(v.terminal).toEqual({ kind: "done", text: all[0].committed, elapsedMs: 850 });
    expect(v.sessionId).toBe("c-1");
    expect(v.model).toEqual({ round: 1, provider: "mock", model: "mock-large", tier: "heavy" });
    expect(v.usage.input_tokens).toBe(120);
    expect(v.usage.output_tokens).toBe(40);
  });

  it("collects thinking silently with a one-line summary", () => {
    const v = replay(ev(textStream));
    expect(v.thinking).toBe("用户问大盘。先概括结构。\n再给结论。");
    expect(thinkingSummary(v.thinking)).toBe("用户问大盘。先概括结构。");
    expect(thinkingSummary("x".repeat(100), 10)).toBe(`${"x".repeat(10)}…`);
    // Thinking never lands in the transcript.
    expect(texts(v).some((t) => itemText(t).includes("用户问大盘"))).toBe(false);
  });
});

describe("tool turns", () => {
  const events = ev(toolTurn);

  it("erases planning text when tool_calls discards it", () => {
    const before = upTo(events, 3);
    expect(itemText(texts(before)[0])).toBe("我先查一下 000001 的诊断，\n然后看大盘");
    const after = upTo(events, 4);
    expect(texts(after)).toHaveLength(0);
    expect(tools(after).map((t) => t.status)).toEqual(["pending", "pending"]);
  });

  it("tracks running, ✓ with elapsed time and ✗ with the error", () => {
    const running = upTo(events, 7);
    expect(tools(running).map((t) => [t.displayName, t.status])).toEqual([
      ["个股诊断", "running"],
      ["大盘概览", "running"],
    ]);
    const v = replay(events);
    const [a, b] = tools(v);
    expect(a.status).toBe("ok");
    expect(a.elapsedMs).toBe(412);
    expect((a.result as Record<string, unknown>).health).toBe("healthy");
    expect(a.args).toEqual({ code: "000001", mode: "diagnose" });
    expect(b.status).toBe("error");
    expect(b.error).toBe("network: connection refused");
  });

  it("keeps tool cards before the final answer and follows the model tier", () => {
    const v = replay(events);
    expect(v.items.map((i) => i.kind)).toEqual(["tool", "tool", "text"]);
    expect(v.model?.tier).toBe("light");
    expect(v.model?.round).toBe(2);
    expect(v.usage).toEqual({ input_tokens: 800, output_tokens: 50, cache_read_tokens: 100, cache_write_tokens: 0 });
  });

  it("keeps text when tool_calls does not discard it", () => {
    const v = replay(ev(cancelled).slice(0, 3));
    expect(texts(v)).toHaveLength(1);
    expect(texts(v)[0].closed).toBe(true);
    expect(itemText(texts(v)[0])).toBe("正在扫描");
  });
});

describe("approvals", () => {
  const events = ev(approvalDeny);

  it("opens a pending approval carrying the request's decisions", () => {
    const v = upTo(events, 3);
    expect(v.approvals).toHaveLength(1);
    expect(v.approvals[0].available_decisions).toEqual(["allow_once", "allow_always", "edit", "deny"]);
    expect(tools(v)[0].displayName).toBe("更新持仓");
  });

  it("closes it on approval_resolved and records the outcome on the card", () => {
    const v = replay(events);
    expect(v.approvals).toEqual([]);
    const [card] = tools(v);
    expect(card.approval).toBe("deny");
    expect(card.status).toBe("error");
    expect(card.error).toBe("用户拒绝了此操作");
    expect(v.terminal?.kind).toBe("done");
  });

  it("creates a card for a request that arrives without tool_calls", () => {
    const v = reduceTurn(initialTurn(), {
      type: "approval_request",
      request: { id: "x", tool: "t", display_name: "工具", args: { a: 1 }, available_decisions: ["deny"] },
    });
    expect(tools(v)[0]).toMatchObject({ id: "x", displayName: "工具", status: "pending" });
  });
});

describe("retry, fallback and notices", () => {
  const v = replay(ev(retryFallback));

  it("drops text from retried and failed-over attempts", () => {
    expect(texts(v).map(itemText)).toEqual(["完整回答"]);
  });

  it("counts retries (⚠) and records the fallback (⚡)", () => {
    expect(v.retries).toBe(1);
    expect(v.fallback).toEqual({ from: "primary", to: "backup", reason: "overloaded" });
    expect(v.items.filter((i) => i.kind === "notice").map((i) => (i.kind === "notice" ? i.level : ""))).toEqual([
      "retry",
      "fallback",
      "warning",
      "compaction",
    ]);
  });

  it("has exactly one terminal state: later events are ignored", () => {
    expect(v.terminal).toEqual({ kind: "done", text: "完整回答", elapsedMs: 31000 });
    expect(v.ignoredAfterTerminal).toBe(2);
  });
});

describe("memory recall", () => {
  it("attaches the recalled memories to the turn instead of a notice", () => {
    const v = replay(ev(memoryRecall));
    expect(v.recalled).toEqual([
      { id: 12, memory_type: "preference", content: "不做创业板，单只仓位不超过 20%", date: "2026-11-02" },
      { id: 41, memory_type: "stock_opinion", content: "600519 在 1400 附近有支撑，等 Spring 确认", date: "2026-11-28" },
    ]);
    expect(v.items.map((i) => i.kind)).toEqual(["text"]);
    expect(texts(v)[0].final).toBe(true);
  });

  it("keeps the recall of a turn whose event came late in the stream", () => {
    const v = replay(ev(retryFallback));
    expect(v.recalled).toEqual([{ id: 3, memory_type: "preference", content: "偏好短线", date: "2026-11-30" }]);
  });

  it("has nothing without a recall event, or with an empty one", () => {
    expect(replay(ev(textStream)).recalled).toEqual([]);
    expect(reduceTurn(initialTurn(), { type: "memory_recall", items: [] }).recalled).toEqual([]);
  });
});

describe("cancel and failure", () => {
  it("cancel marks running tools interrupted", () => {
    const v = replay(ev(cancelled));
    expect(v.terminal).toEqual({ kind: "cancelled" });
    expect(tools(v)[0].status).toBe("interrupted");
    expect(v.phase).toBe("finished");
  });

  it("failure keeps the streamed text and carries the classified kind", () => {
    const v = replay(ev(failed));
    expect(v.terminal).toEqual({ kind: "failed", errorKind: "rate_limit", message: "429 Too Many Requests" });
    expect(itemText(texts(v)[0])).toBe("第一行\n第二");
    expect(texts(v)[0].closed).toBe(true);
  });
});

describe("splitBlocks", () => {
  it("finishes blocks at blank lines and leaves the live tail", () => {
    expect(splitBlocks("# T\n\npara one\nstill\n\nlive")).toEqual({
      blocks: ["# T\n\n", "para one\nstill\n\n"],
      tail: "live",
    });
  });

  it("never splits inside a code fence", () => {
    const text = "```\na\n\nb\n```\n\nafter";
    expect(splitBlocks(text)).toEqual({ blocks: ["```\na\n\nb\n```\n\n"], tail: "after" });
  });

  it("is stable: rendering the blocks plus the tail gives back the text", () => {
    const text = "a\n\n\n\nb\n\n| x |\n|---|\n| 1 |\n";
    const { blocks, tail } = splitBlocks(text);
    expect(blocks.join("") + tail).toBe(text);
  });
});

describe("an approval notice", () => {
  it("joins the turn where it came, like a task notice", () => {
    const notice = { request_id: "call_1", tool_name: "update_portfolio", display_name: "调仓", status: "allowed" as const, decided_by: { type: "app" as const }, summary: "ok", reason: null };
    const v = replay([
      { type: "approval_notice", notice },
      { type: "text_delta", text: "已执行" },
      { type: "done", text: "已执行", elapsed_ms: 3 },
    ] as RuntimeEvent[]);
    expect(v.items.map((i) => i.kind)).toEqual(["approval_notice", "text"]);
    expect(v.items[0]).toMatchObject({ kind: "approval_notice", notice });
  });
});

describe("a task notice", () => {
  it("joins the turn where it came, closing the text before it", () => {
    const notice = { task_id: "bg_1", tool_name: "screen_stocks", display_name: "全市场扫描", outcome: "completed" as const, summary: null, error: null };
    const v = replay([
      { type: "text_delta", text: "先看一下" },
      { type: "task_notice", notice },
      { type: "text_delta", text: "筛选结果已读" },
      { type: "done", text: "筛选结果已读", elapsed_ms: 3 },
    ] as RuntimeEvent[]);
    expect(v.items.map((i) => i.kind)).toEqual(["text", "task_notice", "text"]);
    expect(v.items[1]).toMatchObject({ kind: "task_notice", notice });
    expect((v.items[0] as TextItem).closed).toBe(true);
  });
});
