import { describe, expect, it, vi, beforeEach } from "vitest";
import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { Settings } from "./bindings";

const mocks = vi.hoisted(() => ({
  getSettings: vi.fn(),
  appInfo: vi.fn(),
  listConversations: vi.fn(),
  loadConversation: vi.fn(),
  alwaysAllowed: vi.fn(),
  endSession: vi.fn(),
  renderMarkdown: vi.fn(),
  listMemories: vi.fn(),
  memoryCounts: vi.fn(),
  keyStatuses: vi.fn(),
  listTasks: vi.fn(),
  inboxList: vi.fn(),
  alertHistory: vi.fn(),
  firstRun: vi.fn(),
  pendingUpdate: vi.fn(() => Promise.resolve(null)),
  openConversation: null as null | ((e: { payload: { conversation_id: string | null } }) => void),
}));
vi.mock("./bindings", () => ({
  commands: mocks,
  events: {
    settingsChanged: { listen: () => Promise.resolve(() => {}) },
    openConversation: {
      listen: (f: (e: { payload: { conversation_id: string | null } }) => void) => {
        mocks.openConversation = f;
        return Promise.resolve(() => {});
      },
    },
    conversationEvent: { listen: () => Promise.resolve(() => {}) },
    taskChanged: { listen: () => Promise.resolve(() => {}) },
    inboxChanged: { listen: () => Promise.resolve(() => {}) },
    scheduleRan: { listen: () => Promise.resolve(() => {}) },
    updateFound: { listen: () => Promise.resolve(() => {}) },
  },
}));
vi.mock("@tauri-apps/api/core", () => ({ Channel: class {} }));

import App from "./App";
import { riskFixture } from "./risk/fixtures";

const ok = <T,>(data: T) => ({ status: "ok", data });

const settings = (withModel: boolean): Settings => ({
  version: 1,
  risk: riskFixture,
  language: "zh",
  theme: "system",
  close_to_tray: false,
  notifications: true,
  models: withModel
    ? [{ id: "ds", provider: "deepseek", model: "deepseek-chat", base_url: null, context_window: null, input_price_per_mtok: null, output_price_per_mtok: null }]
    : [],
  main_model: withModel ? "ds" : null,
  light_model: null,
  fallback_models: [],
  stream_idle_timeout_secs: 60,
  tool_timeout_secs: 60,
  approval_timeout_secs: 120,
  proxy: null,
  data_sources: [],
  allow_private_web_fetch: false,
  file_roots: [],
  retention_days: 30,
  intraday_alert_minutes: 5,
  check_for_updates: true,
});

const chat = () => document.querySelector(".chat") as HTMLElement | null;
const nav = async (id: string) => {
  await act(async () => {
    fireEvent.click(document.getElementById(id) as HTMLElement);
  });
};

describe("App", () => {
  beforeEach(() => {
    cleanup();
    vi.clearAllMocks();
    mocks.listTasks.mockResolvedValue(ok([]));
    mocks.inboxList.mockResolvedValue(ok({ requests: [], pending: 0 }));
    mocks.alertHistory.mockResolvedValue(ok([]));
    // a desk past its guided start: the overview shows as it is
    mocks.firstRun.mockResolvedValue(
      ok({
        show: false,
        steps: { finished: true },
        contents: { stocks: 8, stocks_beyond_bundled: 0, indices: 0, newest_bar: 20200616, watchlist: 0, model: null, stock_list: 5640 },
      }),
    );
    mocks.appInfo.mockResolvedValue({ version: "0.1.0", data_home: "/tmp/w", settings_path: "", logs_dir: "" });
    mocks.listConversations.mockResolvedValue(ok([{ id: "c-1", title: "茅台", model: "deepseek/deepseek-chat", updated_at: "" }]));
    mocks.loadConversation.mockResolvedValue(
      ok({
        conversation: { id: "c-1", title: "茅台", model: "deepseek/deepseek-chat", updated_at: "" },
        messages: [{ message: { role: "user", content: "茅台怎么看" }, interrupted: false }],
        usage: { input_tokens: 0, output_tokens: 0 },
        last_turn_interrupted: false,
      }),
    );
    mocks.alwaysAllowed.mockResolvedValue([]);
    mocks.endSession.mockResolvedValue(null);
    mocks.renderMarkdown.mockResolvedValue("");
    mocks.listMemories.mockResolvedValue(ok([]));
    mocks.memoryCounts.mockResolvedValue(ok([]));
    mocks.keyStatuses.mockResolvedValue(ok({ keychain: { state: "available" }, keys: [] }));
  });

  it("has a Memory page next to chat, overview and settings", async () => {
    mocks.getSettings.mockResolvedValue({ settings: settings(true), problem: null, migration_notes: [] });
    render(<App />);
    await screen.findByText("记忆");
    const labels = [...document.querySelectorAll("nav.sidebar button")].map((b) => b.textContent);
    expect(labels).toEqual(["对话", "个股", "自选", "持仓", "市场地图", "策略研究", "信号复盘", "记忆", "审批", "提醒", "概览", "设置"]);
    await nav("nav-memory");
    expect(document.getElementById("memory-page")).toBeTruthy();
    expect(document.getElementById("nav-memory")?.className).toBe("active");
    await waitFor(() => expect(mocks.listMemories).toHaveBeenCalledWith(null, null));
  });

  it("keeps the conversation while another page is shown, without its shortcuts", async () => {
    mocks.getSettings.mockResolvedValue({ settings: settings(true), problem: null, migration_notes: [] });
    render(<App />);
    const conv = await screen.findByText("茅台");
    await act(async () => {
      fireEvent.click(conv);
    });
    expect(document.querySelector(".msg.user")?.textContent).toBe("茅台怎么看");
    fireEvent.change(document.getElementById("composer") as HTMLTextAreaElement, { target: { value: "草稿" } });

    await nav("nav-memory");
    expect(chat()?.hidden).toBe(true);
    expect(document.getElementById("memory-page")).toBeTruthy();
    // Ctrl+N belongs to the chat: not while it is hidden (the conversation is not left).
    await act(async () => {
      fireEvent.keyDown(window, { key: "n", ctrlKey: true });
    });
    expect(mocks.endSession).not.toHaveBeenCalled();

    await nav("nav-chat");
    expect(chat()?.hidden).toBe(false);
    expect(document.getElementById("memory-page")).toBeNull();
    expect(document.querySelector(".msg.user")?.textContent).toBe("茅台怎么看");
    expect((document.getElementById("composer") as HTMLTextAreaElement).value).toBe("草稿");
    expect(mocks.loadConversation).toHaveBeenCalledTimes(1);
  });

  it("without a model opens the overview and does not load the chat until it is visited", async () => {
    mocks.getSettings.mockResolvedValue({ settings: settings(false), problem: null, migration_notes: [] });
    render(<App />);
    await screen.findByText("记忆");
    await waitFor(() => expect(document.getElementById("no-model")).toBeTruthy());
    expect(chat()).toBeNull();
    expect(mocks.listConversations).not.toHaveBeenCalled();
    await nav("nav-memory");
    expect(document.getElementById("memory-page")).toBeTruthy();
    expect(chat()).toBeNull();
  });
  it("a notification opens the task's conversation, or the overview for a task the user started there", async () => {
    mocks.getSettings.mockResolvedValue({ settings: settings(true), problem: null, migration_notes: [] });
    render(<App />);
    await screen.findByText("记忆");
    await nav("nav-memory");
    await act(async () => mocks.openConversation?.({ payload: { conversation_id: null } }));
    expect(document.getElementById("nav-home")?.className).toBe("active");
    await act(async () => mocks.openConversation?.({ payload: { conversation_id: "c-1" } }));
    expect(document.getElementById("nav-chat")?.className).toBe("active");
    await waitFor(() => expect(mocks.loadConversation).toHaveBeenCalledWith("c-1"));
  });
});
