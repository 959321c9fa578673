import { afterEach, describe, expect, it, vi } from "vitest";
import { act, cleanup, render } from "@testing-library/react";
import type { Message, RuntimeEvent, SubAgentRoleLimits } from "../bindings";
import { historyItems } from "./history";
import { reduceTurn, replay, initialTurn, type ToolCard } from "./reducer";
import { asOutcome } from "./subagent";
import ToolCardView from "./ToolCardView";

// The role table as the backend says it; deliberately not the seed's numbers, so a pane
// showing them can only have read them from the backend.
const roles: SubAgentRoleLimits[] = [
  { name: "research", delegate_tool: "delegate_to_research", label: "研究 agent", max_tool_rounds: 5, deadline_secs: 200 },
  { name: "trading", delegate_tool: "delegate_to_trading", label: "交易 agent", max_tool_rounds: 4, deadline_secs: 90 },
];
const mocks = vi.hoisted(() => ({ subAgentRoles: vi.fn() }));
vi.mock("../bindings", () => ({ commands: mocks }));
mocks.subAgentRoles.mockImplementation(() => Promise.resolve(roles));

afterEach(() => {
  vi.useRealTimers();
});

const sub = (kind: string, text: string, call_id = "call_d"): RuntimeEvent => ({ type: "sub_agent", agent: "research", call_id, kind, text });

const result = {
  agent: "research",
  status: "completed",
  result: "000001 处于下跌通道。",
  rounds: 3,
  tool_rounds: 2,
  elapsed: 1.5,
  tool_calls: ["update_portfolio", "analyze_stock"],
  background_task_ids: [],
  context_truncated: false,
  result_truncated: false,
  error: "",
  policy: { next_action: "use_result", retryable: false, fallback_tools: [], instruction: "使用子 Agent 返回的结论。" },
  usage: { input_tokens: 1, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 0 },
};

const events: RuntimeEvent[] = [
  { type: "tool_start", id: "call_d", name: "delegate_to_research", display_name: "研究 agent", args: { task: "看看 000001" } },
  sub("tool_round", "1"),
  sub("tool_start", "update_portfolio"),
  sub("tool_error", "update_portfolio: sub-agent 无权调用工具: update_portfolio"),
  sub("tool_round", "2"),
  sub("tool_start", "analyze_stock"),
  sub("tool_result", "analyze_stock 12ms"),
  sub("text", "000001 处于"),
  sub("text", "下跌通道。"),
  { type: "tool_start", id: "call_e", name: "delegate_to_trading", display_name: "交易 agent", args: { task: "x" } },
  sub("tool_round", "1", "call_e"),
  sub("tool_start", "portfolio", "call_e"),
];

function card(id: string, upTo = events.length): ToolCard {
  const v = replay(events.slice(0, upTo));
  return v.items.find((i) => i.kind === "tool" && i.id === id) as ToolCard;
}

describe("sub-agent panes", () => {
  it("fill from sub_agent events, one per delegation", () => {
    const d = card("call_d");
    expect(d.sub?.agent).toBe("research");
    expect(d.sub?.tools.map((t) => [t.name, t.status, t.ms])).toEqual([
      ["update_portfolio", "error", null],
      ["analyze_stock", "ok", 12],
    ]);
    expect(d.sub?.tools[0].error).toContain("无权调用工具");
    expect(d.sub?.text).toBe("000001 处于下跌通道。");
    const e = card("call_e");
    expect(e.sub?.tools.map((t) => t.name)).toEqual(["portfolio"]);
  });

  it("render live progress, then the status and policy", async () => {
    cleanup();
    const live = card("call_d", 9);
    const { container, rerender } = render(<ToolCardView card={live} />);
    await act(async () => {});
    const pane = container.querySelector(".subagent-pane") as HTMLElement;
    expect(pane.getAttribute("data-status")).toBe("running");
    expect(pane.textContent).toContain("研究 agent");
    expect(container.querySelectorAll(".subagent-tool")).toHaveLength(2);
    expect(container.querySelector(".subagent-tool.error")?.textContent).toContain("update_portfolio");
    expect(container.querySelector(".subagent-text")?.textContent).toBe("000001 处于下跌通道。");

    const done = replay([...events.slice(0, 9), { type: "tool_result", id: "call_d", name: "delegate_to_research", elapsed_ms: 1500, result }]);
    const finished = done.items.find((i) => i.kind === "tool" && i.id === "call_d") as ToolCard;
    rerender(<ToolCardView card={finished} />);
    const p = container.querySelector(".subagent-pane") as HTMLElement;
    expect(p.getAttribute("data-status")).toBe("completed");
    // tool rounds used (not the result's model calls, 3) of the backend's max, elapsed
    // of its deadline
    expect(p.querySelector(".subagent-limits")?.textContent).toBe("工具轮次 2/5 · 1.5s/200s");
    expect(container.querySelector(".subagent-policy")?.getAttribute("data-next-action")).toBe("use_result");
    // not taken for a stock diagnosis
    expect(container.querySelector(".diagnosis")).toBeNull();
  });

  it("read the structured result (also what a reopened conversation has)", () => {
    expect(asOutcome(result)?.toolCalls).toEqual(["update_portfolio", "analyze_stock"]);
    expect(asOutcome({ code: "000001" })).toBeNull();
    expect(asOutcome(null)).toBeNull();
  });
});

describe("sub-agent pane limits and clock", () => {
  it("take every role's limits from the backend, asked once", async () => {
    cleanup();
    const trading: ToolCard = { ...card("call_e"), status: "running" };
    const { container } = render(
      <>
        <ToolCardView card={card("call_d", 9)} />
        <ToolCardView card={trading} />
      </>,
    );
    await act(async () => {});
    const limits = [...container.querySelectorAll(".subagent-limits")].map((e) => e.textContent);
    expect(limits).toEqual(["工具轮次 2/5 · …/200s", "工具轮次 1/4 · …/90s"]);
    expect(mocks.subAgentRoles).toHaveBeenCalledTimes(1);
  });

  it("count the running sub-agent's time each second, then show its final time", async () => {
    cleanup();
    vi.useFakeTimers();
    vi.setSystemTime(new Date("2026-12-04T08:00:00Z"));
    const t0 = Date.now();
    // live: the app stamps each event with when it arrived
    let view = reduceTurn(initialTurn(), events[0], 0, t0);
    view = reduceTurn(view, events[1], 1, t0 + 200);
    const running = view.items.find((i) => i.kind === "tool") as ToolCard;
    const { container, rerender } = render(<ToolCardView card={running} />);
    await act(async () => {});
    const elapsed = () => container.querySelector(".subagent-limits")?.getAttribute("data-elapsed");
    expect(elapsed()).toBe("0s");
    await act(async () => {
      vi.advanceTimersByTime(1000);
    });
    expect(elapsed()).toBe("1s");
    await act(async () => {
      vi.advanceTimersByTime(2000);
    });
    expect(elapsed()).toBe("3s");
    expect(container.querySelector(".subagent-limits")?.textContent).toBe("工具轮次 1/5 · 3s/200s");

    view = reduceTurn(view, { type: "tool_result", id: "call_d", name: "delegate_to_research", elapsed_ms: 3400, result: { ...result, elapsed: 3.4 } }, 2, t0 + 3400);
    rerender(<ToolCardView card={view.items.find((i) => i.kind === "tool") as ToolCard} />);
    expect(elapsed()).toBe("3.4s");
    await act(async () => {
      vi.advanceTimersByTime(5000);
    });
    expect(elapsed()).toBe("3.4s");
  });
});

describe("a reopened delegate call", () => {
  const call = { id: "call_d", name: "delegate_to_research", args: { task: "看看 000001" } };
  const stored: { message: Message; interrupted: boolean; sub_agent: { kind: string; text: string }[] }[] = [
    { message: { role: "user", content: "让研究员看看 000001" }, interrupted: false, sub_agent: [] },
    { message: { role: "assistant", content: "", tool_calls: [call] }, interrupted: false, sub_agent: [] },
    {
      message: { role: "tool", tool_call_id: "call_d", name: "delegate_to_research", content: JSON.stringify(result) },
      interrupted: false,
      sub_agent: [
        { kind: "tool_round", text: "1" },
        { kind: "tool_start", text: "update_portfolio" },
        { kind: "tool_error", text: "update_portfolio: sub-agent 无权调用工具: update_portfolio" },
        { kind: "tool_round", text: "2" },
        { kind: "tool_start", text: "analyze_stock" },
        { kind: "tool_result", text: "analyze_stock 12ms" },
        { kind: "text", text: "000001 处于下跌通道。" },
      ],
    },
  ];

  it("shows its sub-agent's tool rows with ✓/✗ and time, then the result", async () => {
    cleanup();
    const reopened = historyItems(stored).find((i) => i.kind === "tool") as ToolCard;
    expect(reopened.sub?.tools.map((t) => [t.name, t.status, t.ms])).toEqual([
      ["update_portfolio", "error", null],
      ["analyze_stock", "ok", 12],
    ]);
    const { container } = render(<ToolCardView card={reopened} />);
    await act(async () => {});
    const rows = [...container.querySelectorAll(".subagent-tool")].map((e) => [e.getAttribute("data-status"), e.textContent]);
    expect(rows).toEqual([
      ["error", "✗ update_portfolio sub-agent 无权调用工具: update_portfolio"],
      ["ok", "✓ analyze_stock 12ms"],
    ]);
    const pane = container.querySelector(".subagent-pane") as HTMLElement;
    expect(pane.getAttribute("data-status")).toBe("completed");
    expect(pane.querySelector(".subagent-limits")?.textContent).toBe("工具轮次 2/5 · 1.5s/200s");
  });

  it("a result stored before tool rounds were counted says it does not know them", async () => {
    cleanup();
    const { tool_rounds: _, ...before } = result;
    const old = stored.map((m) =>
      m.message.role === "tool" ? { ...m, message: { ...m.message, content: JSON.stringify(before) } } : m,
    );
    const reopened = historyItems(old).find((i) => i.kind === "tool") as ToolCard;
    const { container } = render(<ToolCardView card={reopened} />);
    await act(async () => {});
    expect(container.querySelector(".subagent-limits")?.textContent).toBe("工具轮次 …/5 · 1.5s/200s");
  });

  it("with nothing stored beside it (before steps were kept) shows the result alone", () => {
    const old = stored.map((m) => ({ ...m, sub_agent: [] }));
    const reopened = historyItems(old).find((i) => i.kind === "tool") as ToolCard;
    expect(reopened.sub).toBeUndefined();
    expect(reopened.status).toBe("ok");
  });
});
