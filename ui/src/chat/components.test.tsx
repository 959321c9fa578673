import { describe, expect, it, vi, beforeEach } from "vitest";
import { act, cleanup, fireEvent, render, screen } from "@testing-library/react";
import type { ApprovalRequest, RuntimeEvent } from "../bindings";
import ApprovalDialog, { parseArgs } from "./ApprovalDialog";
import Markdown from "./Markdown";
import RecallDisclosure from "./RecallDisclosure";
import StatusBar, { allowedLabel } from "./StatusBar";
import ToolCardView from "./ToolCardView";
import { asDiagnosis, engineLabel, formatPct, formatPrice } from "./diagnosis";
import { LanguageContext } from "../i18n";
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
    expect(screen.getByText("止损").nextSibling?.textContent).toBe("10.20");
    expect(screen.getByText("目标位").nextSibling?.textContent).toBe("12.50 / 13.80");
    expect(screen.getByText("数据").nextSibling?.textContent).toBe("fresh · 2026-12-01");
    // Not in the result: shown as missing, never made up.
    expect(screen.getByText("最新价").nextSibling?.textContent).toBe("—");
    expect(screen.queryByText("盈亏")).toBeNull();
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
    expect(d).toMatchObject({
      triggers: ["utad"],
      stop: 1500.5,
      targets: [
        { kind: "conservative", price: 1800 },
        { kind: "aggressive", price: null },
      ],
      candidates: [],
      latestClose: null,
      asOf: "2026-11-28",
    });
    expect(asDiagnosis({ rows: [] })).toBeNull();
    expect(asDiagnosis("text")).toBeNull();
  });
});

describe("DiagnosisCard", () => {
  // As analyze_stock returns it: the engine's names, numbers rounded to 4 places only.
  const result = {
    code: "600519",
    name: "贵州茅台",
    health: "🟡警戒",
    ma_pattern: "MA50<MA200(偏弱)",
    l2_channel: "潜伏通道+吸筹通道",
    l4_triggers: ["spring", "sos"],
    latest_close: 1423.4561,
    day_change_pct: -1.23456,
    cost: 1500,
    pnl_pct: -5.1029,
    stop_loss_price: 1395.0049,
    targets: {
      conservative: 1512.3456,
      aggressive: null,
      candidates: [{ kind: "prior_120d_high", price: 1512.3456 }, { kind: "atr_3x", price: 1498.7 }],
    },
    data_status: "stale",
    as_of: "2026-11-28",
  };
  const card: ToolCard = { ...cards[0], result };
  const row = (label: string) => screen.getByText(label).nextSibling?.textContent;

  it("labels targets and rounds prices and percentages (Chinese)", () => {
    render(<ToolCardView card={card} />);
    expect(row("最新价")).toBe("1423.46 (-1.23%)");
    expect(row("成本")).toBe("1500.00");
    expect(row("盈亏")).toBe("-5.10%");
    expect(row("止损")).toBe("1395.00");
    expect(row("目标位")).toBe("保守 1512.35 / 激进 —");
    expect(row("候选目标")).toBe("前120日高点 1512.35 · 3×ATR 1498.70");
    expect(row("触发信号")).toBe("spring、sos");
    expect(row("数据")).toBe("过期 · 2026-11-28");
    expect(row("健康度")).toBe("🟡警戒");
    expect(document.body.textContent).not.toContain("conservative");
    expect(document.body.textContent).not.toContain("1423.4561");
  });

  it("uses English labels in the English UI", () => {
    render(
      <LanguageContext.Provider value="en">
        <ToolCardView card={card} />
      </LanguageContext.Provider>,
    );
    expect(row("Targets")).toBe("Conservative 1512.35 / Aggressive —");
    expect(row("Candidate targets")).toBe("Prior 120-day high 1512.35 · 3×ATR 1498.70");
    expect(row("Health")).toBe("🟡 Caution");
    expect(row("MA pattern")).toBe("MA50 < MA200 (soft)");
    expect(row("L2 channel")).toBe("Latent + Accumulation");
    expect(row("Triggers")).toBe("spring, sos");
    expect(row("Data")).toBe("stale · 2026-11-28");
  });

  it("shows — for fields that are missing or not numbers", () => {
    const bare: ToolCard = { ...cards[0], result: { health: "🟢健康", stop_loss_price: null, targets: { conservative: null, aggressive: "n/a" } } };
    render(<ToolCardView card={bare} />);
    expect(row("止损")).toBe("—");
    expect(row("目标位")).toBe("保守 — / 激进 —");
    expect(row("最新价")).toBe("—");
    expect(row("均线形态")).toBe("—");
    expect(row("触发信号")).toBe("—");
    expect(row("数据")).toBe("—");
  });

  it.each([
    [null, "—", "—"],
    [0, "0.00", "0.00%"],
    [12.5, "12.50", "+12.50%"],
    [-0.004, "0.00", "0.00%"],
    [0.004, "0.00", "0.00%"],
    [0.005, "0.01", "+0.01%"],
    [1395.0049, "1395.00", "+1395.0%"],
    [-123.456, "-123.46", "-123.5%"],
  ])("formats %s as price %s and percentage %s", (n, price, pct) => {
    expect(formatPrice(n)).toBe(price);
    expect(formatPct(n)).toBe(pct);
  });

  it("passes unknown engine labels through and keeps Chinese in the Chinese UI", () => {
    expect(engineLabel("新标签", "en")).toBe("新标签");
    expect(engineLabel("constructor", "en")).toBe("constructor");
    expect(engineLabel("多头排列", "zh")).toBe("多头排列");
    expect(engineLabel("多头排列", "en")).toBe("Bullish alignment");
    expect(engineLabel(null, "en")).toBeNull();
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

describe("ApprovalDialog previews", () => {
  it("shows the exact command, its folder, limit and detach warning for exec_command", () => {
    render(
      <ApprovalDialog
        request={{
          ...request,
          tool: "exec_command",
          display_name: "执行命令",
          args: { command: "nohup ./job.sh &" },
          preview: {
            type: "command",
            command: "nohup ./job.sh &",
            cwd: "/home/u/.wyckoff/workspace",
            timeout_secs: 30,
            detaches: ["nohup"],
          },
        }}
        onDecide={() => {}}
      />,
    );
    expect(document.getElementById("approval-command")?.textContent).toBe("nohup ./job.sh &");
    expect(document.getElementById("approval-cwd")?.textContent).toBe("/home/u/.wyckoff/workspace");
    expect(screen.getByText("时限 30 秒，超时结束整个进程组")).toBeTruthy();
    expect(document.getElementById("approval-detaches")?.textContent).toContain("nohup");
  });

  it("shows write_file's diff line by line, added and removed marked", () => {
    render(
      <LanguageContext.Provider value="en">
        <ApprovalDialog
          request={{
            ...request,
            tool: "write_file",
            display_name: "写入文件",
            args: { path: "plan.md", content: "a\nB\n" },
            preview: {
              type: "file_write",
              path: "/w/plan.md",
              created: false,
              diff: "--- a/plan.md\n+++ b/plan.md\n@@ -2,1 +2,1 @@\n-b\n+B\n",
            },
          }}
          onDecide={() => {}}
        />
      </LanguageContext.Provider>,
    );
    expect(document.getElementById("approval-path")?.textContent).toBe("/w/plan.md");
    const diff = document.getElementById("approval-diff") as HTMLElement;
    expect(Array.from(diff.querySelectorAll(".diff-del")).map((e) => e.textContent)).toEqual(["-b"]);
    expect(Array.from(diff.querySelectorAll(".diff-add")).map((e) => e.textContent)).toEqual(["+B"]);
    expect(diff.querySelectorAll(".diff-meta")).toHaveLength(3);
    expect(screen.queryByText("new file")).toBeNull();
  });

  it("says when nothing would change, and when the call will be refused anyway", () => {
    const { rerender } = render(
      <ApprovalDialog
        request={{ ...request, preview: { type: "file_write", path: "/w/a", created: true, diff: "" } }}
        onDecide={() => {}}
      />,
    );
    expect(screen.getByText("内容与现有文件相同，不会有改动")).toBeTruthy();
    expect(document.getElementById("approval-diff")).toBeNull();
    rerender(
      <ApprovalDialog
        request={{ ...request, preview: { type: "invalid", reason: "path is outside the allowed folders" } }}
        onDecide={() => {}}
      />,
    );
    expect(document.getElementById("approval-invalid")?.textContent).toContain("path is outside the allowed folders");
  });

  it("hides the preview while the arguments are being edited", () => {
    render(
      <ApprovalDialog
        request={{ ...request, preview: { type: "invalid", reason: "x" } }}
        onDecide={() => {}}
      />,
    );
    fireEvent.click(document.getElementById("approval-edit") as HTMLElement);
    expect(document.getElementById("approval-invalid")).toBeNull();
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

  it("names an always-allowed command by what it allows, not by the gate's key", () => {
    expect(allowedLabel("exec_command:git")).toBe("git …");
    expect(allowedLabel("exec_command:/bin/ls")).toBe("/bin/ls …");
    expect(allowedLabel("write_file")).toBe("write_file");
    const onRevoke = vi.fn();
    render(<StatusBar turn={toolView} conversation={emptyUsage()} allowed={["exec_command:git", "write_file"]} onRevoke={onRevoke} />);
    const chips = [...document.querySelectorAll(".always-allowed-tool")];
    expect(chips.map((c) => [c.getAttribute("data-tool"), c.querySelector("code")?.textContent])).toEqual([
      ["exec_command:git", "git …"],
      ["write_file", "write_file"],
    ]);
    const revoke = chips[0].querySelector("button") as HTMLButtonElement;
    expect(revoke.getAttribute("aria-label")).toBe("撤销对 git … 的始终允许");
    revoke.click();
    expect(onRevoke).toHaveBeenCalledWith("exec_command:git");
  });

  it("shows cost estimates only when known", () => {
    render(<StatusBar turn={toolView} conversation={emptyUsage()} turnCost={0.00111} conversationCost={1.234} />);
    expect(document.getElementById("status-turn-cost")?.textContent).toBe("≈ $0.0011");
    expect(document.getElementById("status-conv-cost")?.textContent).toBe("≈ $1.23");
    cleanup();
    render(<StatusBar turn={toolView} conversation={emptyUsage()} turnCost={null} conversationCost={null} />);
    expect(document.getElementById("status-turn-cost")).toBeNull();
    expect(document.getElementById("status-conv-cost")).toBeNull();
    expect(document.getElementById("status-bar")?.textContent).not.toContain("$");
  });
});

describe("RecallDisclosure", () => {
  it("summarises in English and renders nothing without memories", () => {
    const { container } = render(
      <LanguageContext.Provider value="en">
        <RecallDisclosure items={[{ id: 1, memory_type: "market_view", content: "量能不足", date: "2026-12-01" }]} />
      </LanguageContext.Provider>,
    );
    expect(container.querySelector("summary")?.textContent).toBe("🧠 Used 1 memory this turn");
    expect(container.querySelector(".recall-item")?.textContent).toBe("Market view2026-12-01量能不足");
    cleanup();
    const empty = render(<RecallDisclosure items={[]} />);
    expect(empty.container.innerHTML).toBe("");
  });
});
