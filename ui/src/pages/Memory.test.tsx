import { describe, expect, it, vi, beforeEach, afterEach } from "vitest";
import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { MemoryItem } from "../bindings";
import { LanguageContext, translate } from "../i18n";

const mocks = vi.hoisted(() => ({
  listMemories: vi.fn(),
  memoryCounts: vi.fn(),
  addMemory: vi.fn(),
  updateMemory: vi.fn(),
  deleteMemory: vi.fn(),
}));
vi.mock("../bindings", () => ({ commands: mocks }));

import MemoryPage, { SEARCH_DEBOUNCE_MS, localDate, sourceText } from "./Memory";

const ok = <T,>(data: T) => ({ status: "ok", data });
const err = (kind: string, message: string) => ({ status: "error", error: { kind, message, code: null } });

// Noon local time: the same calendar day in every time zone the test may run in.
const at = (y: number, m: number, d: number) => new Date(y, m - 1, d, 12, 0).toISOString();

const pref: MemoryItem = {
  id: 7,
  memory_type: "preference",
  content: "不做创业板，单只仓位不超过 20%",
  codes: [],
  created_at: at(2026, 11, 2),
  source: "",
};
const opinion: MemoryItem = {
  id: 9,
  memory_type: "stock_opinion",
  content: "600519 在 1400 附近有支撑",
  codes: ["600519"],
  created_at: at(2026, 11, 28),
  source: "conversation:c-42",
};
const counts = (n: Record<string, number>) =>
  ok(["preference", "session", "stock_opinion", "decision", "market_view"].map((t) => ({ memory_type: t, count: n[t] ?? 0 })));

const item = (id: number) => document.querySelector(`.memory-item[data-id="${id}"]`) as HTMLElement;
const click = async (el: Element | null) => {
  await act(async () => {
    fireEvent.click(el as HTMLElement);
  });
};

async function renderPage() {
  render(<MemoryPage />);
  await waitFor(() => expect(mocks.listMemories).toHaveBeenCalled());
  await act(async () => {});
}

describe("MemoryPage", () => {
  beforeEach(() => {
    cleanup();
    vi.clearAllMocks();
    mocks.listMemories.mockResolvedValue(ok([opinion, pref]));
    mocks.memoryCounts.mockResolvedValue(counts({ preference: 1, stock_opinion: 1 }));
    mocks.updateMemory.mockImplementation(async (id: number, content: string) => ok({ ...(id === 7 ? pref : opinion), content }));
    mocks.deleteMemory.mockResolvedValue(ok(null));
    mocks.addMemory.mockImplementation(async (memory_type: string, content: string) =>
      ok({ id: 20, memory_type, content, codes: [], created_at: at(2026, 12, 1), source: "" }),
    );
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("lists memories with type, content, codes, local date and source, and counts by type", async () => {
    await renderPage();
    expect(mocks.listMemories).toHaveBeenCalledWith(null, null);
    expect(document.getElementById("memory-page")).toBeTruthy();
    const items = [...document.querySelectorAll(".memory-item")];
    expect(items.map((i) => [i.getAttribute("data-id"), i.getAttribute("data-type")])).toEqual([
      ["9", "stock_opinion"],
      ["7", "preference"],
    ]);
    const o = item(9);
    expect(o.querySelector(".memory-type")?.textContent).toBe("个股观点");
    expect(o.querySelector(".memory-content")?.textContent).toBe("600519 在 1400 附近有支撑");
    expect(o.querySelector(".memory-code")?.textContent).toBe("600519");
    expect(o.querySelector(".memory-date")?.textContent).toBe("2026-11-28");
    expect(o.querySelector(".memory-source")?.textContent).toBe("来自对话");
    expect(item(7).querySelector(".memory-source")?.textContent).toBe("手动添加");
    const count = (type: string) => document.querySelector(`.memory-count[data-type="${type}"]`)?.textContent;
    expect(count("all")).toBe("2");
    expect(count("preference")).toBe("1");
    expect(count("decision")).toBe("0");
    expect(document.querySelector('.memory-tab[data-type="market_view"]')?.textContent).toContain("市场观点");
  });

  it("filters by type", async () => {
    await renderPage();
    mocks.listMemories.mockResolvedValue(ok([opinion]));
    const tab = document.querySelector('.memory-tab[data-type="stock_opinion"]');
    await click(tab);
    expect(mocks.listMemories).toHaveBeenLastCalledWith("stock_opinion", null);
    expect(tab?.getAttribute("aria-selected")).toBe("true");
    expect(document.querySelectorAll(".memory-item")).toHaveLength(1);
    await click(document.querySelector('.memory-tab[data-type="all"]'));
    expect(mocks.listMemories).toHaveBeenLastCalledWith(null, null);
  });

  it("searches once typing settles", async () => {
    vi.useFakeTimers();
    render(<MemoryPage />);
    await act(async () => {});
    expect(mocks.listMemories).toHaveBeenCalledTimes(1);
    const box = document.getElementById("memory-search") as HTMLInputElement;
    for (const q of ["6", "60", "6005", "600519"]) {
      fireEvent.change(box, { target: { value: q } });
      await act(async () => {
        vi.advanceTimersByTime(100);
      });
    }
    expect(mocks.listMemories).toHaveBeenCalledTimes(1);
    await act(async () => {
      vi.advanceTimersByTime(SEARCH_DEBOUNCE_MS - 100);
    });
    expect(mocks.listMemories).toHaveBeenCalledTimes(2);
    expect(mocks.listMemories).toHaveBeenLastCalledWith(null, "600519");

    // A two-character Chinese query, within the selected type.
    await act(async () => {
      fireEvent.click(document.querySelector('.memory-tab[data-type="preference"]') as HTMLElement);
    });
    fireEvent.change(box, { target: { value: "仓位" } });
    await act(async () => {
      vi.advanceTimersByTime(SEARCH_DEBOUNCE_MS);
    });
    expect(mocks.listMemories).toHaveBeenLastCalledWith("preference", "仓位");
  });

  it("edits inline: refuses empty content, saves, and cancels", async () => {
    await renderPage();
    await click(item(7).querySelector(".memory-edit"));
    const editor = item(7).querySelector(".memory-editor") as HTMLTextAreaElement;
    expect(editor.value).toBe(pref.content);
    fireEvent.change(editor, { target: { value: "   " } });
    await click(item(7).querySelector(".memory-save"));
    expect(mocks.updateMemory).not.toHaveBeenCalled();
    expect(item(7).querySelector(".memory-edit-error")?.textContent).toBe("内容不能为空");

    fireEvent.change(editor, { target: { value: "不做创业板和科创板 " } });
    await click(item(7).querySelector(".memory-save"));
    expect(mocks.updateMemory).toHaveBeenCalledWith(7, "不做创业板和科创板");
    expect(item(7).querySelector(".memory-editor")).toBeNull();
    expect(item(7).querySelector(".memory-content")?.textContent).toBe("不做创业板和科创板");

    await click(item(9).querySelector(".memory-edit"));
    fireEvent.change(item(9).querySelector(".memory-editor") as HTMLTextAreaElement, { target: { value: "改了" } });
    await click(item(9).querySelector(".memory-cancel"));
    expect(item(9).querySelector(".memory-content")?.textContent).toBe(opinion.content);
    expect(mocks.updateMemory).toHaveBeenCalledTimes(1);
  });

  it("shows the error message when saving fails", async () => {
    mocks.updateMemory.mockResolvedValue(err("not_found", "memory 7 not found"));
    await renderPage();
    await click(item(7).querySelector(".memory-edit"));
    fireEvent.change(item(7).querySelector(".memory-editor") as HTMLTextAreaElement, { target: { value: "新内容" } });
    await click(item(7).querySelector(".memory-save"));
    expect(item(7).querySelector(".memory-edit-error")?.textContent).toBe("memory 7 not found");
    // Still editing, the text kept.
    expect((item(7).querySelector(".memory-editor") as HTMLTextAreaElement).value).toBe("新内容");
  });

  it("deletes only after a confirmation inside the page", async () => {
    const confirm = vi.spyOn(window, "confirm");
    await renderPage();
    await click(item(9).querySelector(".memory-delete"));
    expect(mocks.deleteMemory).not.toHaveBeenCalled();
    expect(item(9).textContent).toContain("确定删除这条记忆");
    await click(item(9).querySelector(".memory-delete-cancel"));
    expect(item(9).querySelector(".memory-delete-confirm")).toBeNull();

    mocks.memoryCounts.mockResolvedValue(counts({ preference: 1 }));
    await click(item(9).querySelector(".memory-delete"));
    await click(item(9).querySelector(".memory-delete-confirm"));
    expect(mocks.deleteMemory).toHaveBeenCalledWith(9);
    expect(item(9)).toBeNull();
    expect(document.querySelector('.memory-count[data-type="stock_opinion"]')?.textContent).toBe("0");
    expect(confirm).not.toHaveBeenCalled();
  });

  it("shows the error message when deleting fails", async () => {
    mocks.deleteMemory.mockResolvedValue(err("internal", "database is locked"));
    await renderPage();
    await click(item(9).querySelector(".memory-delete"));
    await click(item(9).querySelector(".memory-delete-confirm"));
    expect(item(9).querySelector(".memory-item-error")?.textContent).toBe("database is locked");
  });

  it("adds a memory of the chosen type, refusing empty text and showing errors", async () => {
    await renderPage();
    const text = document.getElementById("memory-add-text") as HTMLTextAreaElement;
    await click(document.getElementById("memory-add-submit"));
    expect(mocks.addMemory).not.toHaveBeenCalled();
    expect(document.getElementById("memory-add-error")?.textContent).toBe("内容不能为空");

    fireEvent.change(document.getElementById("memory-add-type") as HTMLSelectElement, { target: { value: "decision" } });
    fireEvent.change(text, { target: { value: "12 月不加仓白酒" } });
    mocks.listMemories.mockClear();
    mocks.memoryCounts.mockClear();
    await click(document.getElementById("memory-add-submit"));
    expect(mocks.addMemory).toHaveBeenCalledWith("decision", "12 月不加仓白酒");
    expect(text.value).toBe("");
    expect(document.getElementById("memory-add-error")).toBeNull();
    expect(document.getElementById("memory-add-status")?.textContent).toBe("已添加");
    expect(mocks.listMemories).toHaveBeenCalled();
    expect(mocks.memoryCounts).toHaveBeenCalled();

    mocks.addMemory.mockResolvedValue(err("invalid_input", "duplicate preference memory (id 7)"));
    fireEvent.change(text, { target: { value: pref.content } });
    await click(document.getElementById("memory-add-submit"));
    expect(document.getElementById("memory-add-error")?.textContent).toBe("duplicate preference memory (id 7)");
    expect(text.value).toBe(pref.content);
  });

  it("explains where memories come from when there are none, and says so when a search finds nothing", async () => {
    mocks.listMemories.mockResolvedValue(ok([]));
    mocks.memoryCounts.mockResolvedValue(counts({}));
    await renderPage();
    const empty = document.getElementById("memory-empty")?.textContent ?? "";
    expect(empty).toContain("离开一段对话");
    expect(empty).toContain("偏好");
    fireEvent.change(document.getElementById("memory-search") as HTMLInputElement, { target: { value: "茅台" } });
    await waitFor(() => expect(mocks.listMemories).toHaveBeenLastCalledWith(null, "茅台"));
    await waitFor(() => expect(document.getElementById("memory-no-match")?.textContent).toBe("没有匹配“茅台”的记忆"));
    expect(document.getElementById("memory-empty")).toBeNull();
  });

  it("shows the error when the memories cannot be loaded", async () => {
    mocks.listMemories.mockResolvedValue(err("setup", "no model is configured"));
    await renderPage();
    expect(document.getElementById("memory-error")?.textContent).toBe("no model is configured");
    expect(document.getElementById("memory-empty")).toBeNull();
  });

  it("shows a thrown IPC failure too", async () => {
    mocks.memoryCounts.mockRejectedValue(new Error("ipc down"));
    await renderPage();
    expect(document.getElementById("memory-error")?.textContent).toBe("ipc down");
  });

  it("speaks English in the English UI", async () => {
    render(
      <LanguageContext.Provider value="en">
        <MemoryPage />
      </LanguageContext.Provider>,
    );
    expect(await screen.findByText("Stock opinion", { selector: ".memory-type" })).toBeTruthy();
    expect(document.querySelector('.memory-tab[data-type="all"]')?.textContent).toBe("All2");
    expect(item(9).querySelector(".memory-source")?.textContent).toBe("from a conversation");
  });
});

describe("memory helpers", () => {
  const t = (k: Parameters<typeof translate>[1]) => translate("zh", k);

  it("shows the local calendar date", () => {
    expect(localDate(new Date(2026, 0, 5, 23, 59).toISOString())).toBe("2026-01-05");
    expect(localDate(new Date(2026, 11, 31, 0, 1).toISOString())).toBe("2026-12-31");
    expect(localDate("not a date")).toBe("not a date");
  });

  it("names the source", () => {
    expect(sourceText("", t)).toBe("手动添加");
    expect(sourceText("conversation:abc", t)).toBe("来自对话");
    expect(sourceText("compaction_flush", t)).toBe("上下文压缩前保存");
    expect(sourceText("cli", t)).toBe("命令行");
    expect(sourceText("import:2026", t)).toBe("import:2026");
  });
});
