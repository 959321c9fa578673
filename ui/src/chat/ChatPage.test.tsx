import { describe, expect, it, vi, beforeEach } from "vitest";
import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { RuntimeEvent } from "../bindings";
import approvalDeny from "./fixtures/approval_deny.json";
import failed from "./fixtures/failed.json";
import memoryRecall from "./fixtures/memory_recall.json";
import toolTurn from "./fixtures/tool_turn.json";

const mocks = vi.hoisted(() => ({
  listConversations: vi.fn(),
  loadConversation: vi.fn(),
  alwaysAllowed: vi.fn(),
  startTurn: vi.fn(),
  cancelTurn: vi.fn(),
  answerApproval: vi.fn(),
  renderMarkdown: vi.fn(),
  searchConversations: vi.fn(),
  renameConversation: vi.fn(),
  deleteConversation: vi.fn(),
  exportConversation: vi.fn(),
  revokeAlwaysAllowed: vi.fn(),
  endSession: vi.fn(),
  listSkills: vi.fn(),
}));
// Every turn's events come app-wide (ConversationEvent): tests push them through the
// page's listener.
const listeners = vi.hoisted(() => [] as ((e: { payload: unknown }) => void)[]);
vi.mock("../bindings", () => ({
  commands: mocks,
  events: {
    conversationEvent: {
      listen: (f: (e: { payload: unknown }) => void) => {
        listeners.push(f);
        return Promise.resolve(() => {});
      },
    },
  },
}));

import ChatPage from "./ChatPage";

const ok = <T,>(data: T) => ({ status: "ok", data });

/** Sends `payload` as the hub would, to the page's listener. */
async function emit(payload: { conversation_id: string; turn: number; kind: "user" | "follow_up"; client_ref: string | null; event: unknown }) {
  const listen = listeners[listeners.length - 1];
  await act(async () => listen({ payload }));
}

/** Events of the page's last own turn (tagged with the ref it sent). */
async function feed(events: unknown[], conversation = "c-1") {
  const calls = mocks.startTurn.mock.calls;
  const ref = calls[calls.length - 1][2] as string;
  for (const event of events) {
    await emit({ conversation_id: conversation, turn: calls.length, kind: "user", client_ref: ref, event: event as RuntimeEvent });
  }
}

async function sendMessage(text: string) {
  const box = document.getElementById("composer") as HTMLTextAreaElement;
  fireEvent.change(box, { target: { value: text } });
  await act(async () => {
    fireEvent.keyDown(box, { key: "Enter" });
  });
}

describe("ChatPage", () => {
  beforeEach(() => {
    cleanup();
    vi.clearAllMocks();
    listeners.length = 0;
    mocks.listConversations.mockResolvedValue(ok([]));
    mocks.alwaysAllowed.mockResolvedValue([]);
    mocks.startTurn.mockResolvedValue(ok({ conversation_id: "c-1", turn: 1 }));
    mocks.cancelTurn.mockResolvedValue(true);
    mocks.answerApproval.mockResolvedValue(true);
    mocks.revokeAlwaysAllowed.mockResolvedValue(true);
    mocks.endSession.mockResolvedValue(null);
    mocks.listSkills.mockResolvedValue(
      ok({
        dir: "/h/skills",
        warnings: [],
        skills: [
          { name: "backtest", description: "策略回测", origin: { type: "builtin" } },
          { name: "checkup", description: "持仓全面体检，综合诊断建议", origin: { type: "builtin" } },
          { name: "weekly", description: "周复盘", origin: { type: "user", path: "/h/skills/weekly.md" } },
        ],
      }),
    );
    mocks.renderMarkdown.mockImplementation(async (s: string) => `<p class="rendered">${s.trim()}</p>`);
  });

  it("Shift+Enter does not send; Enter sends and the text streams then renders", async () => {
    render(<ChatPage hasModel onOpenSettings={() => {}} />);
    const box = document.getElementById("composer") as HTMLTextAreaElement;
    fireEvent.change(box, { target: { value: "第一行" } });
    fireEvent.keyDown(box, { key: "Enter", shiftKey: true });
    expect(mocks.startTurn).not.toHaveBeenCalled();
    await sendMessage("大盘怎么样");
    expect(mocks.startTurn).toHaveBeenCalledWith(null, "大盘怎么样", expect.any(String));
    expect(document.getElementById("chat-stop")).toBeTruthy();
    await feed([{ type: "model_start", round: 1, provider: "mock", model: "m", tier: "heavy" }, { type: "text_delta", text: "结" }]);
    expect(document.getElementById("transcript")?.textContent).toContain("结");
    expect(document.getElementById("status-model")?.textContent).toBe("🧠 mock/m");
    await feed([{ type: "text_delta", text: "论。" }, { type: "done", text: "结论。", elapsed_ms: 10 }]);
    await waitFor(() => expect(document.querySelector(".msg.final .rendered")?.textContent).toBe("结论。"));
    expect(document.getElementById("chat-send")).toBeTruthy();
    // No recall event: no disclosure.
    expect(document.querySelector(".recall-disclosure")).toBeNull();
  });

  it("a new conversation's own events are shown before start_turn answers, and its follow-up turn after", async () => {
    // The turn's events carry the ref the page sent: they are its own even before the
    // page learns the conversation's id; the follow-up turn then arrives the same way.
    let answer: (v: unknown) => void = () => {};
    mocks.startTurn.mockImplementation(() => new Promise((resolve) => (answer = resolve)));
    render(<ChatPage hasModel onOpenSettings={() => {}} />);
    await sendMessage("扫描全市场");
    await feed([{ type: "text_delta", text: "已提交" }, { type: "done", text: "已提交。", elapsed_ms: 5 }]);
    const notice = { task_id: "bg_1", tool_name: "screen_stocks", display_name: "全市场扫描", outcome: "completed", summary: "{}", error: null };
    const followUp = [
      { type: "task_notice", notice },
      { type: "text_delta", text: "筛选结果已读" },
      { type: "done", text: "筛选结果已读", elapsed_ms: 5 },
    ];
    // Another conversation's follow-up in the same window is not taken for this one.
    await emit({ conversation_id: "other", turn: 7, kind: "follow_up", client_ref: null, event: { type: "done", text: "别的对话", elapsed_ms: 1 } });
    for (const event of followUp) await emit({ conversation_id: "c-1", turn: 2, kind: "follow_up", client_ref: null, event });
    await act(async () => answer(ok({ conversation_id: "c-1", turn: 1 })));
    await waitFor(() => expect(document.querySelector(".msg.system.task-notice")?.textContent).toContain("后台任务完成：全市场扫描"));
    expect(document.querySelector(".task-notice")?.getAttribute("data-task-id")).toBe("bg_1");
    await waitFor(() => expect(document.getElementById("transcript")?.textContent).toContain("筛选结果已读"));
    expect(document.getElementById("transcript")?.textContent).toContain("已提交。");
    expect(document.getElementById("transcript")?.textContent).not.toContain("别的对话");
    // A follow-up turn has no words of the user's.
    expect(document.querySelectorAll(".msg.user")).toHaveLength(1);
  });

  it("a failed turn names the failure in words, with the backend's message", async () => {
    render(<ChatPage hasModel onOpenSettings={() => {}} />);
    await sendMessage("大盘怎么样");
    await feed(failed as unknown[]);
    const end = document.querySelector(".error.turn-end")?.textContent ?? "";
    expect(end).toContain("请求过于频繁");
    expect(end).toContain("429 Too Many Requests");
    expect(end).not.toContain("rate_limit");
  });

  it("shows tool cards and the stop button cancels", async () => {
    render(<ChatPage hasModel onOpenSettings={() => {}} />);
    await sendMessage("诊断 000001");
    await feed((toolTurn as unknown[]).slice(0, 7));
    expect(document.querySelectorAll(".tool-card[data-status=running]")).toHaveLength(2);
    fireEvent.click(document.getElementById("chat-stop") as HTMLElement);
    expect(mocks.cancelTurn).toHaveBeenCalledWith("c-1");
    await feed((toolTurn as unknown[]).slice(7));
    expect(screen.getByText("健康度")).toBeTruthy();
    expect(document.querySelector(".tool-card[data-status=error]")?.textContent).toContain("connection refused");
  });

  it("estimates the cost per round at each round's model prices", async () => {
    const entry = (id: string, model: string, input: number | null, output: number | null) => ({
      id,
      provider: "openai_compatible" as const,
      model,
      base_url: null,
      context_window: null,
      input_price_per_mtok: input,
      output_price_per_mtok: output,
    });
    const priced = { models: [entry("big", "mock-large", 2, 8), entry("small", "mock-small", 0.5, 1)], light_model: "small", fallback_models: [] };
    const { rerender } = render(<ChatPage hasModel settings={priced} onOpenSettings={() => {}} />);
    expect(document.getElementById("status-conv-cost")).toBeNull();
    await sendMessage("诊断 000001");
    await feed(toolTurn as unknown[]);
    expect(document.getElementById("status-turn-cost")?.textContent).toBe("≈ $0.0011");
    expect(document.getElementById("status-conv-cost")?.textContent).toBe("≈ $0.0011");
    // The light model's price removed: that round is unknown, so nothing is shown (not $0).
    rerender(<ChatPage hasModel settings={{ ...priced, models: [priced.models[0], entry("small", "mock-small", null, 1)] }} onOpenSettings={() => {}} />);
    expect(document.getElementById("status-turn-cost")).toBeNull();
    expect(document.getElementById("status-conv-cost")).toBeNull();
    expect(document.getElementById("status-bar")?.textContent).not.toContain("$");
  });

  it("opens the approval dialog and sends the decision", async () => {
    render(<ChatPage hasModel onOpenSettings={() => {}} />);
    await sendMessage("买 100 股茅台");
    await feed((approvalDeny as unknown[]).slice(0, 3));
    expect(document.getElementById("approval-dialog")).toBeTruthy();
    await act(async () => {
      fireEvent.click(document.getElementById("approval-deny") as HTMLElement);
    });
    expect(mocks.answerApproval).toHaveBeenCalledWith("call_9", { type: "deny" });
    await feed((approvalDeny as unknown[]).slice(3));
    expect(document.getElementById("approval-dialog")).toBeNull();
  });

  it("shows what the agent remembered, collapsed under the turn's reply", async () => {
    render(<ChatPage hasModel onOpenSettings={() => {}} />);
    await sendMessage("茅台还能拿吗");
    await feed(memoryRecall as unknown[]);
    const turn = document.querySelector(".turn") as HTMLElement;
    const details = turn.querySelector("details.recall-disclosure") as HTMLDetailsElement;
    expect(details).toBeTruthy();
    expect(details.open).toBe(false);
    expect(details.querySelector("summary")?.textContent).toContain("本轮参考了 2 条记忆");
    // Under the reply, not a notice in the stream.
    expect(turn.querySelector(".msg.final")?.compareDocumentPosition(details)).toBe(Node.DOCUMENT_POSITION_FOLLOWING);
    expect(turn.querySelector(".turn-notice")).toBeNull();
    const items = [...details.querySelectorAll(".recall-item")];
    expect(items.map((i) => i.getAttribute("data-type"))).toEqual(["preference", "stock_opinion"]);
    expect(items[0].textContent).toContain("偏好");
    expect(items[0].textContent).toContain("2026-11-02");
    expect(items[1].textContent).toContain("个股观点");
    expect(items[1].textContent).toContain("600519 在 1400 附近有支撑");
  });

  it("lists always-allowed tools after a decision and after the turn, and revokes them", async () => {
    render(<ChatPage hasModel onOpenSettings={() => {}} />);
    await sendMessage("买 100 股茅台");
    await feed((approvalDeny as unknown[]).slice(0, 3));
    expect(document.getElementById("always-allowed")).toBeNull();
    mocks.alwaysAllowed.mockResolvedValue(["update_portfolio"]);
    await act(async () => {
      fireEvent.click(document.getElementById("approval-allow-always") as HTMLElement);
    });
    expect(mocks.answerApproval).toHaveBeenCalledWith("call_9", { type: "allow_always" });
    expect(mocks.alwaysAllowed).toHaveBeenLastCalledWith("c-1");
    const chip = document.querySelector("#always-allowed .always-allowed-tool[data-tool=update_portfolio]");
    expect(chip?.textContent).toContain("update_portfolio");
    expect(document.getElementById("always-allowed")?.textContent).toContain("始终允许");

    // The end of the turn refreshes the list too.
    mocks.alwaysAllowed.mockClear();
    await feed((approvalDeny as unknown[]).slice(3));
    expect(mocks.alwaysAllowed).toHaveBeenCalledWith("c-1");

    // ✕ takes it back and the list is reloaded.
    mocks.alwaysAllowed.mockResolvedValue([]);
    await act(async () => {
      fireEvent.click(chip?.querySelector(".always-allowed-revoke") as HTMLElement);
    });
    expect(mocks.revokeAlwaysAllowed).toHaveBeenCalledWith("c-1", "update_portfolio");
    expect(document.getElementById("always-allowed")).toBeNull();
  });

  describe("session end", () => {
    const conv = (id: string, title: string) => ({ id, title, model: "m", updated_at: "2026-12-01T00:00:00Z" });
    const loaded = (id: string) =>
      ok({ conversation: conv(id, id), messages: [], usage: { input_tokens: 0, output_tokens: 0 }, last_turn_interrupted: false });

    beforeEach(() => {
      mocks.listConversations.mockResolvedValue(ok([conv("a", "甲"), conv("b", "乙")]));
      mocks.loadConversation.mockImplementation(async (id: string) => loaded(id));
      mocks.deleteConversation.mockResolvedValue(ok(null));
    });

    const openConv = async (title: string) => {
      const button = await screen.findByText(title);
      await act(async () => {
        fireEvent.click(button);
      });
    };

    it("ends the previous conversation's session when another one is opened or a new chat starts", async () => {
      const { rerender } = render(<ChatPage hasModel onOpenSettings={() => {}} />);
      await openConv("甲");
      expect(mocks.endSession).not.toHaveBeenCalled();
      await openConv("乙");
      expect(mocks.endSession.mock.calls).toEqual([["a"]]);
      // Staying in the same conversation, or re-rendering, ends nothing.
      await openConv("乙");
      rerender(<ChatPage hasModel={false} onOpenSettings={() => {}} />);
      expect(mocks.endSession.mock.calls).toEqual([["a"]]);
      await act(async () => {
        fireEvent.click(document.getElementById("chat-new") as HTMLElement);
      });
      expect(mocks.endSession.mock.calls).toEqual([["a"], ["b"]]);
      // Already in a new chat: nothing to end.
      await act(async () => {
        fireEvent.click(document.getElementById("chat-new") as HTMLElement);
      });
      expect(mocks.endSession).toHaveBeenCalledTimes(2);
    });

    it("ends a conversation started here when the user moves on (Ctrl+N)", async () => {
      render(<ChatPage hasModel onOpenSettings={() => {}} />);
      await sendMessage("你好");
      await feed([{ type: "done", text: "好", elapsed_ms: 1 }]);
      expect(mocks.endSession).not.toHaveBeenCalled();
      await act(async () => {
        fireEvent.keyDown(window, { key: "n", ctrlKey: true });
      });
      expect(mocks.endSession.mock.calls).toEqual([["c-1"]]);
    });

    it("does not end the session of a conversation that was deleted", async () => {
      render(<ChatPage hasModel onOpenSettings={() => {}} />);
      await openConv("甲");
      const row = document.querySelector('#chat-conversations li[data-id="a"]') as HTMLElement;
      await act(async () => {
        fireEvent.click(row.querySelector(".conv-delete") as HTMLElement);
      });
      expect(mocks.deleteConversation).toHaveBeenCalledWith("a");
      expect(mocks.endSession).not.toHaveBeenCalled();
    });
  });

  it("a reopened conversation's tool cards read like live ones", async () => {
    mocks.listConversations.mockResolvedValue(ok([{ id: "c-7", title: "调仓", model: "m", updated_at: "" }]));
    mocks.loadConversation.mockResolvedValue(
      ok({
        conversation: { id: "c-7", title: "调仓", model: "m", updated_at: "" },
        messages: [
          { message: { role: "user", content: "把资金改成 9000" }, interrupted: false },
          { message: { role: "assistant", content: "", tool_calls: [{ id: "t1", name: "update_portfolio", args: { action: "set_cash" } }] }, interrupted: false },
          {
            message: { role: "tool", tool_call_id: "t1", name: "update_portfolio", content: '{"code":"not_approved","error":"用户拒绝执行此操作 [update_portfolio]"}', is_error: true },
            interrupted: false,
          },
          { message: { role: "assistant", content: "好的，资金未修改。" }, interrupted: false },
        ],
        usage: { input_tokens: 1, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 0 },
        last_turn_interrupted: false,
      }),
    );
    render(<ChatPage hasModel onOpenSettings={() => {}} />);
    const item = await screen.findByText("调仓");
    await act(async () => {
      fireEvent.click(item);
    });
    const card = document.querySelector(".tool-card[data-tool=update_portfolio][data-status=error]") as HTMLElement;
    expect(card.querySelector(".tool-name")?.textContent).toBe("调仓操作");
    expect(card.querySelector(".tool-error")?.textContent).toBe("用户拒绝执行此操作 [update_portfolio]");
    expect(card.textContent).not.toContain("not_approved");
  });

  it("an open conversation is read again when the window is shown, so a chat bot's messages appear", async () => {
    const conversation = { id: "bot-1", title: "机器人对话", model: "m", updated_at: "" };
    const usage = { input_tokens: 1, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 0 };
    const stored = (texts: [string, string][]) =>
      ok({
        conversation,
        messages: texts.flatMap(([q, a]) => [
          { message: { role: "user", content: q }, interrupted: false },
          { message: { role: "assistant", content: a }, interrupted: false },
        ]),
        usage,
        last_turn_interrupted: false,
      });
    mocks.listConversations.mockResolvedValue(ok([conversation]));
    mocks.loadConversation.mockResolvedValue(stored([["分析 000001", "平安银行：吸筹末段"]]));
    render(<ChatPage hasModel onOpenSettings={() => {}} />);
    const item = await screen.findByText("机器人对话");
    await act(async () => {
      fireEvent.click(item);
    });
    expect(await screen.findByText("平安银行：吸筹末段")).toBeTruthy();

    // The bot answered another message while the window was hidden to the tray.
    mocks.loadConversation.mockResolvedValue(stored([["分析 000001", "平安银行：吸筹末段"], ["我的持仓", "持仓 2 只"]]));
    const visibility = vi.spyOn(document, "visibilityState", "get");
    visibility.mockReturnValue("hidden");
    await act(async () => {
      document.dispatchEvent(new Event("visibilitychange"));
    });
    expect(screen.queryByText("持仓 2 只")).toBeNull();
    visibility.mockReturnValue("visible");
    await act(async () => {
      document.dispatchEvent(new Event("visibilitychange"));
    });
    expect(await screen.findByText("持仓 2 只")).toBeTruthy();
    expect(screen.getAllByText("平安银行：吸筹末段")).toHaveLength(1);
    visibility.mockRestore();
  });

  it("the conversation actions are icons with accessible names, not emoji", async () => {
    mocks.listConversations.mockResolvedValue(ok([{ id: "a", title: "甲", model: "m", updated_at: "" }]));
    render(<ChatPage hasModel onOpenSettings={() => {}} />);
    await screen.findByText("甲");
    const del = document.querySelector("#chat-conversations .conv-delete") as HTMLButtonElement;
    expect(del.getAttribute("aria-label")).toBe("删除");
    expect(del.title).toBe("删除");
    expect(del.querySelector("svg")).toBeTruthy();
    expect(screen.getByRole("button", { name: "删除" })).toBe(del);
    expect(screen.getByRole("button", { name: "重命名" })).toBeTruthy();
    expect(document.getElementById("chat-conversations")?.textContent).not.toMatch(/🗑|✎/u);
  });

  it("without a model it points to Settings", async () => {
    const go = vi.fn();
    render(<ChatPage hasModel={false} onOpenSettings={go} />);
    fireEvent.click(screen.getByText("前往设置"));
    expect(go).toHaveBeenCalled();
  });

  it("a setup error from start_turn shows the message and a way to Settings", async () => {
    mocks.startTurn.mockResolvedValue({ status: "error", error: { kind: "setup", message: "no model is configured", code: null } });
    render(<ChatPage hasModel onOpenSettings={() => {}} />);
    await sendMessage("hi");
    expect(document.getElementById("chat-error")?.textContent).toContain("no model is configured");
    expect(document.getElementById("chat-send")).toBeTruthy();
  });

  it("loads a stored conversation with its interrupted turn marked", async () => {
    mocks.listConversations.mockResolvedValue(ok([{ id: "c-9", title: "旧对话", model: "m", updated_at: "2026-12-01T00:00:00Z" }]));
    mocks.loadConversation.mockResolvedValue(
      ok({
        conversation: { id: "c-9", title: "旧对话", model: "m", updated_at: "" },
        messages: [
          { message: { role: "user", content: "你好\n\n[当前北京时间：2026-12-01 09:00（星期二，UTC+8）]" }, interrupted: true },
          { message: { role: "assistant", content: "", tool_calls: [{ id: "t1", name: "analyze_stock", args: { code: "000001" } }] }, interrupted: true },
          { message: { role: "tool", tool_call_id: "t1", name: "analyze_stock", content: "{\"health\":\"ok\"}" }, interrupted: true },
        ],
        usage: { input_tokens: 5, output_tokens: 6, cache_read_tokens: 0, cache_write_tokens: 0 },
        last_turn_interrupted: true,
      }),
    );
    mocks.alwaysAllowed.mockResolvedValue(["update_portfolio"]);
    render(<ChatPage hasModel onOpenSettings={() => {}} />);
    const item = await screen.findByText("旧对话");
    await act(async () => {
      fireEvent.click(item);
    });
    expect(document.querySelector(".msg.user")?.textContent).toBe("你好");
    expect(document.getElementById("chat-interrupted")).toBeTruthy();
    expect(document.querySelector(".tool-card")?.getAttribute("data-status")).toBe("ok");
    expect(document.getElementById("status-conv-tokens")?.textContent).toBe("会话 ↑5 ↓6");
    expect(document.querySelector("#always-allowed .always-allowed-tool[data-tool=update_portfolio]")).toBeTruthy();
  });
  describe("slash palette", () => {
    const box = () => document.getElementById("composer") as HTMLTextAreaElement;
    const options = () => [...document.querySelectorAll("#slash-palette [role=option]")].map((o) => o.getAttribute("data-skill"));
    const selected = () => document.querySelector("#slash-palette [aria-selected=true]")?.getAttribute("data-skill");
    const type = async (text: string) => {
      await act(async () => {
        fireEvent.change(box(), { target: { value: text } });
      });
    };
    const key = async (k: string) => {
      await act(async () => {
        fireEvent.keyDown(box(), { key: k });
      });
    };

    it("opens on /, lists every skill with its origin, filters as you type and picks with Enter", async () => {
      render(<ChatPage hasModel onOpenSettings={() => {}} />);
      await type("/");
      await waitFor(() => expect(options()).toEqual(["backtest", "checkup", "weekly"]));
      expect(mocks.listSkills).toHaveBeenCalledTimes(1);
      expect(document.querySelector("#slash-palette [data-skill=weekly] .badge")?.textContent).toBe("自定义");
      // typing on does not read the folder again; opening the palette again does
      await type("/ch");
      expect(mocks.listSkills).toHaveBeenCalledTimes(1);
      expect(box().getAttribute("aria-expanded")).toBe("true");
      await type("/c");
      expect(options()).toEqual(["checkup", "backtest"]);
      expect(box().getAttribute("aria-activedescendant")).toBe("slash-opt-checkup");
      await key("ArrowDown");
      expect(selected()).toBe("backtest");
      await key("ArrowDown");
      expect(selected()).toBe("checkup");
      await key("ArrowUp");
      expect(selected()).toBe("backtest");
      await key("Enter");
      expect(box().value).toBe("/backtest ");
      expect(document.getElementById("slash-palette")).toBeNull();
      expect(mocks.startTurn).not.toHaveBeenCalled();
    });

    it("Esc closes the palette without sending or stopping anything; a click picks", async () => {
      render(<ChatPage hasModel onOpenSettings={() => {}} />);
      await type("/we");
      await waitFor(() => expect(options()).toEqual(["weekly"]));
      await key("Escape");
      expect(document.getElementById("slash-palette")).toBeNull();
      expect(box().value).toBe("/we");
      await type("/");
      await waitFor(() => expect(options()).toHaveLength(3));
      await act(async () => {
        fireEvent.mouseDown(document.querySelector("[data-skill=checkup]") as HTMLElement);
      });
      expect(box().value).toBe("/checkup ");
    });

    it("when the skills cannot be listed, a /word goes to the backend, which judges it", async () => {
      mocks.listSkills.mockResolvedValue({ status: "error", error: { kind: "internal", message: "settings file is corrupt", code: null } });
      render(<ChatPage hasModel onOpenSettings={() => {}} />);
      await sendMessage("/checkup 000001");
      expect(document.getElementById("composer-error")).toBeNull();
      expect(mocks.startTurn).toHaveBeenCalledWith(null, "/checkup 000001", expect.anything());
    });

    it("an unknown /word is said under the composer and not sent; a known one is sent as typed", async () => {
      render(<ChatPage hasModel onOpenSettings={() => {}} />);
      await sendMessage("/nosuch 000001");
      expect(document.getElementById("composer-error")?.textContent).toBe("没有名为 /nosuch 的技能：输入 / 查看可用的技能");
      expect(mocks.startTurn).not.toHaveBeenCalled();
      expect(box().value).toBe("/nosuch 000001");
      // a path is plain text, not a command
      await sendMessage("/home/me/notes.md 里写了什么");
      expect(mocks.startTurn).toHaveBeenCalledTimes(1);
      expect(document.getElementById("composer-error")).toBeNull();
      await feed([{ type: "done", elapsed_ms: 1 }]);
      await sendMessage("/checkup 000001");
      expect(mocks.startTurn).toHaveBeenLastCalledWith("c-1", "/checkup 000001", expect.anything());
      expect(document.querySelector(".turn:last-child .skill-mark")?.textContent).toBe("⚡ 由技能 /checkup 展开");
    });
  });
});
