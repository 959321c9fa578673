import { describe, expect, it, vi, beforeEach } from "vitest";
import { act, cleanup, fireEvent, render, screen } from "@testing-library/react";
import type { ApprovalRequest, RuntimeEvent } from "../bindings";
import ApprovalDialog, { parseArgs } from "./ApprovalDialog";
import Markdown from "./Markdown";
import StatusBar from "./StatusBar";
import ToolCardView from "./ToolCardView";
import { asDiagnosis } from "./diagnosis";
import { emptyUsage, replay, type ToolCard } from "./reducer";
import toolTurn from "./fixtures/tool_turn.json";

beforeEach(() => cleanup());

const toolView = replay(toolTurn as RuntimeEvent[]);
const cards = toolView.items.filter((i): i is ToolCard => i.kind === "tool");

describe("ToolCardView", () => {
  it("shows a diagnosis as a readable card, not raw JSON", () => {
    const { container } = render(<ToolCardView card={cards[0]} />);
    expect(screen.getByText("个股诊断")).toBeTruthy();
    expect(container.textContent).toContain("✓ 412ms");
    expect(screen.getByText("健康度").nextSibling?.textContent).toBe("healthy");
    expect(screen.getByText("触发信号").nextSibling?.textContent).toBe("spring、sos");
    expect(screen.getByText("目标位").nextSibling?.textContent).toBe("12.5 / 13.8");
    expect(screen.getByText("数据").nextSibling?.textContent).toBe("fresh · 2026-12-01");
    expect(container.querySelector("pre")).toBeNull();
    fireEvent.click(container.querySelector(".tool-head") as HTMLElement);
    expect(container.querySelectorAll("pre.json")).toHaveLength(2);
  });

  it("shows ✗ with the error", () => {
    const { container } = render(<ToolCardView card={cards[1]} />);
    expect(container.textContent).toContain("✗");
    expect(container.textContent).toContain("network: connection refused");
    expect(container.querySelector("[data-status=error]")).toBeTruthy();
  });

  it("reads the engine's field names too", () => {
    const d = asDiagnosis({
      code: "600519",
      name: "贵州茅台",
      mode: "diagnose",
      health: "weak",
      ma_pattern: "bearish",
      l2_channel: "markdown",
      l4_triggers: ["utad"],
      stop_loss_price: 1500.5,
      targets: { conservative: 1800, aggressive: null, candidates: [] },
      data_status: "stale",
      latest_date: "2026-11-28",
    });
    expect(d).toMatchObject({ triggers: ["utad"], stop: "1500.5", targets: ["conservative 1800"], asOf: "2026-11-28" });
    expect(asDiagnosis({ rows: [] })).toBeNull();
    expect(asDiagnosis("text")).toBeNull();
  });
});

const request: ApprovalRequest = {
  id: "call_9",
  tool: "update_portfolio",
  display_name: "更新持仓",
  args: { action: "add", code: "600519", shares: 100 },
  available_decisions: ["allow_once", "allow_always", "edit", "deny"],
};

describe("ApprovalDialog", () => {
  it("shows the tool and its arguments in full", () => {
    render(<ApprovalDialog request={request} onDecide={() => {}} />);
    expect(document.getElementById("approval-tool")?.textContent).toBe("更新持仓");
    expect(JSON.parse(document.getElementById("approval-args")?.textContent ?? "")).toEqual(request.args);
  });

  it("offers exactly the decisions the request carries", () => {
    render(<ApprovalDialog request={{ ...request, available_decisions: ["allow_once", "deny"] }} onDecide={() => {}} />);
    expect(document.getElementById("approval-allow-once")).toBeTruthy();
    expect(document.getElementById("approval-deny")).toBeTruthy();
    expect(document.getElementById("approval-allow-always")).toBeNull();
    expect(document.getElementById("approval-edit")).toBeNull();
  });

  it("sends deny and allow decisions", () => {
    const onDecide = vi.fn();
    render(<ApprovalDialog request={request} onDecide={onDecide} />);
    fireEvent.click(document.getElementById("approval-deny") as HTMLElement);
    fireEvent.click(document.getElementById("approval-allow-always") as HTMLElement);
    expect(onDecide.mock.calls).toEqual([[{ type: "deny" }], [{ type: "allow_always" }]]);
  });

  it("validates edited arguments before sending them", () => {
    const onDecide = vi.fn();
    render(<ApprovalDialog request={request} onDecide={onDecide} />);
    fireEvent.click(document.getElementById("approval-edit") as HTMLElement);
    const editor = document.getElementById("approval-editor") as HTMLTextAreaElement;
    const run = document.getElementById("approval-run-edited") as HTMLButtonElement;
    fireEvent.change(editor, { target: { value: "{ not json" } });
    expect(run.disabled).toBe(true);
    expect(document.getElementById("approval-edit-error")?.textContent).toContain("JSON 无效");
    fireEvent.change(editor, { target: { value: "[1]" } });
    expect(run.disabled).toBe(true);
    fireEvent.change(editor, { target: { value: '{"action":"add","code":"600519","shares":200}' } });
    expect(run.disabled).toBe(false);
    fireEvent.click(run);
    expect(onDecide).toHaveBeenCalledWith({ type: "edit", args: { action: "add", code: "600519", shares: 200 } });
  });

  it("parseArgs accepts only objects", () => {
    expect(parseArgs('{"a":1}')).toEqual({ ok: true, args: { a: 1 } });
    expect(parseArgs("null").ok).toBe(false);
    expect(parseArgs("{").ok).toBe(false);
  });
});

describe("Markdown", () => {
  it("renders finished blocks once and re-renders only the live tail", async () => {
    const renderFn = vi.fn(async (s: string) => `<p>${s.trim().length}</p>`);
    const { rerender, container } = render(<Markdown text={"# 标题\n\n第一段"} render={renderFn} />);
    await act(async () => {});
    rerender(<Markdown text={"# 标题\n\n第一段继续"} render={renderFn} />);
    await act(async () => {});
    rerender(<Markdown text={"# 标题\n\n第一段继续\n\n尾"} render={renderFn} />);
    await act(async () => {});
    const calls = renderFn.mock.calls.map((c) => c[0]);
    expect(calls.filter((c) => c === "# 标题\n\n")).toHaveLength(1);
    expect(calls).toEqual(["# 标题\n\n", "第一段", "第一段继续", "第一段继续\n\n", "尾"]);
    expect(container.querySelectorAll(".md-block")).toHaveLength(3);
  });

  it("shows text as plain text until the sanitised HTML arrives", () => {
    const never = () => new Promise<string>(() => {});
    const { container } = render(<Markdown text={"<img src=x onerror=alert(1)>"} render={never} />);
    expect(container.querySelector("img")).toBeNull();
    expect(container.textContent).toContain("<img src=x onerror=alert(1)>");
  });
});

describe("StatusBar", () => {
  it("shows model, tier, tokens, retry and fallback", () => {
    render(<StatusBar turn={toolView} conversation={{ ...emptyUsage(), input_tokens: 12345, output_tokens: 60 }} />);
    expect(document.getElementById("status-model")?.textContent).toBe("⚡ mock/mock-small");
    expect(document.getElementById("status-turn-tokens")?.textContent).toBe("本轮 ↑800 ↓50");
    expect(document.getElementById("status-conv-tokens")?.textContent).toBe("会话 ↑12.3k ↓60");
    expect(document.getElementById("status-retry")).toBeNull();
    const retried = { ...toolView, retries: 2, fallback: { from: "a", to: "b", reason: "r" } };
    render(<StatusBar turn={retried} conversation={emptyUsage()} />);
    expect(document.getElementById("status-retry")?.textContent).toBe("⚠ 重试 2 次");
    expect(document.getElementById("status-fallback")?.textContent).toBe("⚡ a → b");
  });
});
