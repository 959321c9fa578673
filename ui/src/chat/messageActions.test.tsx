import { describe, expect, it, vi, beforeEach } from "vitest";
import { act, cleanup, fireEvent, render, waitFor } from "@testing-library/react";
import type { ConversationHistory, ConversationSummary, HistoryMessage, RuntimeEvent } from "../bindings";
import { LanguageContext, translate } from "../i18n";
import { historyItems } from "./history";
import { actionsFor, forkOriginText, regenerateTarget } from "./messageActions";

const mocks = vi.hoisted(() => ({
  listConversations: vi.fn(),
  loadConversation: vi.fn(),
  forkConversation: vi.fn(),
  alwaysAllowed: vi.fn(),
  startTurn: vi.fn(),
  cancelTurn: vi.fn(),
  renderMarkdown: vi.fn(),
  endSession: vi.fn(),
  listSkills: vi.fn(),
}));
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

/** An event of the page's last own turn, as the hub sends it. */
async function own(event: RuntimeEvent, conversation: string) {
  const calls = mocks.startTurn.mock.calls;
  const payload = { conversation_id: conversation, turn: calls.length, kind: "user", client_ref: calls[calls.length - 1][2], event };
  await act(async () => listeners[listeners.length - 1]({ payload }));
}

import ChatPage from "./ChatPage";

const ok = <T,>(data: T) => ({ status: "ok", data });
const user = (seq: number, content: string): HistoryMessage => ({ seq, message: { role: "user", content }, interrupted: false, skill: null, task_notice: null, approval_notice: null });
const answer = (seq: number, content: string): HistoryMessage => ({ seq, message: { role: "assistant", content }, interrupted: false, skill: null, task_notice: null, approval_notice: null });
const notice = (seq: number): HistoryMessage => ({
  seq,
  message: { role: "user", content: "<tool-name>screen_stocks</tool-name><status>completed</status>", origin: "system_notification" },
  interrupted: false,
  skill: null,
  task_notice: null, approval_notice: null,
});
const summary = (id: string, title: string, forked_from: ConversationSummary["forked_from"] = null): ConversationSummary => ({
  id,
  title,
  model: "mock",
  updated_at: "2026-12-04T17:00:00Z",
  forked_from,
});
const history = (c: ConversationSummary, messages: HistoryMessage[]): ConversationHistory => ({
  conversation: c,
  messages,
  usage: { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 },
  last_turn_interrupted: false,
});

const twoTurns = [user(1, "第一问"), answer(2, "第一答"), user(3, "第二问"), answer(4, "第二答")];

describe("which actions a message offers", () => {
  it("fork on every message, edit on every user message, regenerate on the last answer only", () => {
    const items = historyItems(twoTurns);
    const target = regenerateTarget(items);
    expect(target?.user.text).toBe("第二问");
    expect(target?.user.forkBefore).toBe(2);
    expect(items.map((i) => actionsFor(i, target?.answerId ?? null))).toEqual([
      ["fork", "edit"],
      ["fork"],
      ["fork", "edit"],
      ["fork", "regenerate"],
    ]);
  });

  it("regenerate a one-turn conversation from before its first message", () => {
    const target = regenerateTarget(historyItems([user(1, "问"), answer(2, "答")]));
    expect(target?.user.text).toBe("问");
    expect(target?.user.forkBefore).toBe(0);
  });

  it("no regenerate when a completion turn came after the last user message", () => {
    expect(regenerateTarget(historyItems([...twoTurns, notice(5), answer(6, "任务已完成")]))).toBeNull();
    // Unanswered: nothing to regenerate.
    expect(regenerateTarget(historyItems([...twoTurns, user(5, "第三问")]))).toBeNull();
  });
});

describe("where a fork came from", () => {
  const origin = { conversation_id: "src", message_seq: 2 };
  it("names the source and the message, in both languages", () => {
    expect(forkOriginText(origin, "大盘", (k, v) => translate("zh", k, v))).toBe("分叉自「大盘」第 2 条消息");
    expect(forkOriginText(origin, "Market", (k, v) => translate("en", k, v))).toBe("Forked from “Market” at message #2");
  });
  it("a fork before the first message says it started from the beginning", () => {
    const start = { conversation_id: "src", message_seq: 0 };
    expect(forkOriginText(start, "大盘", (k, v) => translate("zh", k, v))).toBe("分叉自「大盘」开头");
    expect(forkOriginText(start, "Market", (k, v) => translate("en", k, v))).toBe("Forked from the start of “Market”");
    expect(forkOriginText(start, null, (k, v) => translate("en", k, v))).toBe("Forked from the start of a deleted conversation");
  });

  it("says so when the source is gone", () => {
    expect(forkOriginText(origin, null, (k, v) => translate("zh", k, v))).toBe("分叉自一段已删除的对话（第 2 条消息）");
    expect(forkOriginText(origin, null, (k, v) => translate("en", k, v))).toBe("Forked from a deleted conversation (message #2)");
  });
});

describe("message actions in the chat", () => {
  const source = summary("src", "第一问");
  const fork = summary("fork-1", "第一问", { conversation_id: "src", message_seq: 2 });
  let stored: Record<string, ConversationHistory>;

  beforeEach(() => {
    cleanup();
    vi.clearAllMocks();
    listeners.length = 0;
    stored = { src: history(source, twoTurns), "fork-1": history(fork, twoTurns.slice(0, 2)) };
    mocks.listConversations.mockImplementation(async () => ok([fork, source]));
    mocks.loadConversation.mockImplementation(async (id: string) => ok(stored[id]));
    mocks.forkConversation.mockResolvedValue(ok(fork));
    mocks.alwaysAllowed.mockResolvedValue([]);
    mocks.startTurn.mockResolvedValue(ok({ conversation_id: "fork-1" }));
    mocks.endSession.mockResolvedValue(null);
    mocks.listSkills.mockResolvedValue(ok({ dir: "/h/skills", warnings: [], skills: [] }));
    mocks.renderMarkdown.mockImplementation(async (s: string) => `<p>${s.trim()}</p>`);
  });

  async function openSource(lang: "zh" | "en" = "zh") {
    render(
      <LanguageContext.Provider value={lang}>
        <ChatPage hasModel onOpenSettings={() => {}} />
      </LanguageContext.Provider>,
    );
    await waitFor(() => expect(document.querySelector('#chat-conversations li[data-id="src"] .conv-open')).toBeTruthy());
    await act(async () => fireEvent.click(document.querySelector('#chat-conversations li[data-id="src"] .conv-open') as HTMLElement));
    await waitFor(() => expect(document.querySelectorAll(".msg-block")).toHaveLength(4));
  }

  const block = (seq: number) => document.querySelector(`.msg-block[data-seq="${seq}"]`) as HTMLElement;
  const buttons = (seq: number) => Array.from(block(seq).querySelectorAll(".msg-actions button")).map((b) => b.className);

  it("shows each message's actions", async () => {
    await openSource();
    expect([1, 2, 3, 4].map(buttons)).toEqual([["msg-fork", "msg-edit"], ["msg-fork"], ["msg-fork", "msg-edit"], ["msg-fork", "msg-regenerate"]]);
    expect(block(4).querySelector(".msg-regenerate")?.textContent).toBe("重新生成");
  });

  it("the list row and the header say where a fork came from; the header opens the source", async () => {
    await openSource("en");
    expect(document.querySelector('#chat-conversations li[data-id="fork-1"] .conv-forked-from')?.textContent).toBe(
      "Forked from “第一问” at message #2",
    );
    expect(document.querySelector('#chat-conversations li[data-id="src"] .conv-forked-from')).toBeNull();
    expect(document.getElementById("chat-forked-from")).toBeNull();
    await act(async () => fireEvent.click(document.querySelector('#chat-conversations li[data-id="fork-1"] .conv-open') as HTMLElement));
    await waitFor(() => expect(document.getElementById("chat-forked-from")?.textContent).toBe("Forked from “第一问” at message #2"));
    await act(async () => fireEvent.click(document.getElementById("chat-forked-from") as HTMLElement));
    await waitFor(() => expect(mocks.loadConversation).toHaveBeenLastCalledWith("src"));
    await waitFor(() => expect(document.getElementById("chat-forked-from")).toBeNull());
  });

  it("fork from here forks at that message and opens the fork, sending nothing", async () => {
    await openSource();
    await act(async () => fireEvent.click(block(2).querySelector(".msg-fork") as HTMLElement));
    expect(mocks.forkConversation).toHaveBeenCalledWith("src", 2);
    await waitFor(() => expect(mocks.loadConversation).toHaveBeenLastCalledWith("fork-1"));
    await waitFor(() => expect(document.getElementById("chat-forked-from")?.textContent).toBe("分叉自「第一问」第 2 条消息"));
    expect(mocks.startTurn).not.toHaveBeenCalled();
  });

  it("edit forks just before the user message and sends the edited text in the fork", async () => {
    await openSource();
    await act(async () => fireEvent.click(block(3).querySelector(".msg-edit") as HTMLElement));
    const box = block(3).querySelector(".msg-edit-text") as HTMLTextAreaElement;
    expect(box.value).toBe("第二问");
    fireEvent.change(box, { target: { value: "改过的第二问" } });
    await act(async () => fireEvent.click(block(3).querySelector(".msg-edit-send") as HTMLElement));
    expect(mocks.forkConversation).toHaveBeenCalledWith("src", 2);
    await waitFor(() => expect(mocks.startTurn).toHaveBeenCalledWith("fork-1", "改过的第二问", expect.any(String)));
  });

  it("edit of the first question forks before everything (#0) and sends the edited text", async () => {
    await openSource();
    await act(async () => fireEvent.click(block(1).querySelector(".msg-edit") as HTMLElement));
    const box = block(1).querySelector(".msg-edit-text") as HTMLTextAreaElement;
    expect(box.value).toBe("第一问");
    fireEvent.change(box, { target: { value: "改过的第一问" } });
    await act(async () => fireEvent.click(block(1).querySelector(".msg-edit-send") as HTMLElement));
    expect(mocks.forkConversation).toHaveBeenCalledWith("src", 0);
    await waitFor(() => expect(mocks.startTurn).toHaveBeenCalledWith("fork-1", "改过的第一问", expect.any(String)));
  });

  it("the first turn of a new conversation offers regenerate, which forks before its first message", async () => {
    stored = { ...stored, "c-new": history(summary("c-new", "新问题"), [user(1, "新问题"), answer(2, "新答")]) };
    mocks.startTurn.mockResolvedValue(ok({ conversation_id: "c-new" }));
    render(<ChatPage hasModel onOpenSettings={() => {}} />);
    const box = document.getElementById("composer") as HTMLTextAreaElement;
    fireEvent.change(box, { target: { value: "新问题" } });
    await act(async () => fireEvent.keyDown(box, { key: "Enter" }));
    await own({ type: "done", text: "新答", elapsed_ms: 5 }, "c-new");
    const button = document.querySelector(".turn .msg-regenerate") as HTMLElement;
    expect(button).toBeTruthy();
    await act(async () => fireEvent.click(button));
    await waitFor(() => expect(mocks.forkConversation).toHaveBeenCalledWith("c-new", 0));
  });

  it("regenerate forks before the last user message and sends it again", async () => {
    await openSource();
    await act(async () => fireEvent.click(block(4).querySelector(".msg-regenerate") as HTMLElement));
    await waitFor(() => expect(mocks.startTurn).toHaveBeenCalledWith("fork-1", "第二问", expect.any(String)));
    expect(mocks.forkConversation).toHaveBeenCalledWith("src", 2);
  });

  it("the actions are disabled while a turn runs in the conversation, and the finished turn offers regenerate", async () => {
    mocks.startTurn.mockResolvedValue(ok({ conversation_id: "src" }));
    await openSource();
    const box = document.getElementById("composer") as HTMLTextAreaElement;
    fireEvent.change(box, { target: { value: "第三问" } });
    await act(async () => fireEvent.keyDown(box, { key: "Enter" }));
    const all = () => Array.from(document.querySelectorAll<HTMLButtonElement>(".msg-actions button"));
    expect(all().length).toBeGreaterThan(0);
    expect(all().every((b) => b.disabled)).toBe(true);
    // While the turn runs, the stored last answer is no longer the last: no regenerate.
    expect(document.querySelector(".msg-regenerate")).toBeNull();
    await own({ type: "done", text: "第三答", elapsed_ms: 5 }, "src");
    expect(all().every((b) => !b.disabled)).toBe(true);
    expect(document.querySelectorAll(".msg-regenerate")).toHaveLength(1);
    expect(document.querySelector(".turn .msg-regenerate")).toBeTruthy();
  });
});
