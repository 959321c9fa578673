import { describe, expect, it } from "vitest";
import { cleanup, render } from "@testing-library/react";
import type { RuntimeEvent } from "../bindings";
import { replay, type ToolCard } from "./reducer";
import { asOutcome } from "./subagent";
import ToolCardView from "./ToolCardView";

const sub = (kind: string, text: string, call_id = "call_d"): RuntimeEvent => ({ type: "sub_agent", agent: "research", call_id, kind, text });

const result = {
  agent: "research",
  status: "completed",
  result: "000001 处于下跌通道。",
  rounds: 3,
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
  sub("tool_start", "update_portfolio"),
  sub("tool_error", "update_portfolio: sub-agent 无权调用工具: update_portfolio"),
  sub("tool_start", "analyze_stock"),
  sub("tool_result", "analyze_stock 12ms"),
  sub("text", "000001 处于"),
  sub("text", "下跌通道。"),
  { type: "tool_start", id: "call_e", name: "delegate_to_trading", display_name: "交易 agent", args: { task: "x" } },
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

  it("render live progress, then the status and policy", () => {
    cleanup();
    const live = card("call_d", 7);
    const { container, rerender } = render(<ToolCardView card={live} />);
    const pane = container.querySelector(".subagent-pane") as HTMLElement;
    expect(pane.getAttribute("data-status")).toBe("running");
    expect(pane.textContent).toContain("研究 agent");
    expect(container.querySelectorAll(".subagent-tool")).toHaveLength(2);
    expect(container.querySelector(".subagent-tool.error")?.textContent).toContain("update_portfolio");
    expect(container.querySelector(".subagent-text")?.textContent).toBe("000001 处于下跌通道。");

    const done = replay([...events.slice(0, 7), { type: "tool_result", id: "call_d", name: "delegate_to_research", elapsed_ms: 1500, result }]);
    const finished = done.items.find((i) => i.kind === "tool" && i.id === "call_d") as ToolCard;
    rerender(<ToolCardView card={finished} />);
    const p = container.querySelector(".subagent-pane") as HTMLElement;
    expect(p.getAttribute("data-status")).toBe("completed");
    expect(p.textContent).toContain("3/8");
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
