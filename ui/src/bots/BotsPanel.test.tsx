import { describe, expect, it, vi, beforeEach } from "vitest";
import { render, screen, fireEvent, waitFor, cleanup } from "@testing-library/react";
import type { BotsView } from "../bindings";

const mocks = vi.hoisted(() => ({
  botsView: vi.fn(),
  botPair: vi.fn(),
  botSetApprover: vi.fn(),
  botUnpair: vi.fn(),
  botAdd: vi.fn(),
  botRemove: vi.fn(),
}));
vi.mock("../bindings", () => ({ commands: mocks }));

import BotsPanel, { normalizeCode, serverText } from "./BotsPanel";
import { botsText } from "./text";

const waiting: BotsView = {
  bots: [{ name: "tg", kind: "telegram", token_set: true, daily_tokens: 200000, per_minute: 6, senders: [], server: { front: "app", here: true, since: "2026-12-07T02:00:00+00:00" } }],
  pending: [{ code: "K7PQ2MAB", bot: "tg", sender_id: "42", label: "alice", expires_at: "2026-12-07T03:00:00+00:00" }],
};
const paired: BotsView = {
  bots: [{ ...waiting.bots[0], senders: [{ sender_id: "42", label: "alice", approver: false, paired_at: "2026-12-07T02:00:00+00:00" }] }],
  pending: [],
};

describe("BotsPanel", () => {
  beforeEach(() => {
    cleanup();
    vi.clearAllMocks();
  });

  it("approves a waiting code and then lists the sender", async () => {
    mocks.botsView.mockResolvedValueOnce({ status: "ok", data: waiting }).mockResolvedValue({ status: "ok", data: paired });
    mocks.botPair.mockResolvedValue({ status: "ok", data: null });
    render(<BotsPanel />);
    expect(await screen.findByText("K7PQ2MAB")).toBeTruthy();
    expect(screen.getByText(/令牌已设置/)).toBeTruthy();
    expect(screen.getByText(/本应用正在服务/)).toBeTruthy();
    fireEvent.click(screen.getByText("批准配对", { selector: "li button" }));
    // A dialog names who gets in before anything is paired.
    const dialog = await screen.findByRole("dialog");
    expect(dialog.textContent).toContain("alice（42）将可以通过 tg 向桌面提问");
    expect(mocks.botPair).not.toHaveBeenCalled();
    fireEvent.click(document.getElementById("bot-pair-confirm-ok") as HTMLButtonElement);
    await waitFor(() => expect(mocks.botPair).toHaveBeenCalledWith("K7PQ2MAB"));
    expect(await screen.findByText("已配对。")).toBeTruthy();
    expect(document.querySelector('[data-sender="42"]')?.textContent).toContain("alice (42)");

    mocks.botSetApprover.mockResolvedValue({ status: "ok", data: null });
    fireEvent.click(screen.getByLabelText("可审批"));
    await waitFor(() => expect(mocks.botSetApprover).toHaveBeenCalledWith("tg", "42", true));
  });

  it("says why a typed code paired nobody", async () => {
    mocks.botsView.mockResolvedValue({ status: "ok", data: { bots: [], pending: [] } });
    mocks.botPair.mockResolvedValue({ status: "error", error: { kind: "not_found", message: "no pairing code 'ZZZZ' is waiting", code: null } });
    render(<BotsPanel />);
    expect(await screen.findByText("还没有机器人。")).toBeTruthy();
    fireEvent.change(document.getElementById("bot-pair-code") as HTMLInputElement, { target: { value: " zz-zz " } });
    fireEvent.click(document.getElementById("bot-pair") as HTMLButtonElement);
    await waitFor(() => expect(mocks.botPair).toHaveBeenCalledWith("ZZZZ"));
    expect((await screen.findByRole("alert")).textContent).toBe("没有完成：no pairing code 'ZZZZ' is waiting");
  });

  it("adds a bot with its token and clears the form", async () => {
    mocks.botsView.mockResolvedValue({ status: "ok", data: { bots: [], pending: [] } });
    mocks.botAdd.mockResolvedValue({ status: "ok", data: null });
    render(<BotsPanel />);
    await screen.findByText("还没有机器人。");
    const set = (id: string, value: string) => fireEvent.change(document.getElementById(id) as HTMLInputElement, { target: { value } });
    set("bot-add-name", " desk ");
    set("bot-add-token", "123:abc");
    set("bot-add-api-url", "http://127.0.0.1:9/");
    fireEvent.click(document.getElementById("bot-add") as HTMLButtonElement);
    await waitFor(() => expect(mocks.botAdd).toHaveBeenCalledWith("desk", "telegram", "http://127.0.0.1:9/", "123:abc"));
    expect(await screen.findByText("已添加 desk。")).toBeTruthy();
    expect((document.getElementById("bot-add-token") as HTMLInputElement).value).toBe("");
  });

  it("says who serves each bot", () => {
    const zh = botsText("zh");
    const en = botsText("en");
    const bot = waiting.bots[0];
    const cases: [typeof bot, RegExp, RegExp][] = [
      [bot, /^本应用正在服务 · 自 /, /^served by this app · since /],
      [{ ...bot, server: { front: "cli", here: false, since: bot.server!.since } }, /^由 wyckoff daemon/, /^served by wyckoff daemon/],
      [{ ...bot, server: { front: "app", here: false, since: bot.server!.since } }, /^由另一个桌面应用服务/, /^served by another desktop app/],
      [{ ...bot, server: null }, /^未在服务/, /^not served \(/],
      [{ ...bot, server: null, token_set: false }, /^缺少令牌/, /^no token/],
    ];
    for (const [b, z, e] of cases) {
      expect(serverText(b, zh)).toMatch(z);
      expect(serverText(b, en)).toMatch(e);
    }
  });

  it("normalizes a typed code as the backend does", () => {
    const cases: [string, string][] = [
      ["k7pq 2mab", "K7PQ2MAB"],
      ["K7PQ-2MAB", "K7PQ2MAB"],
      ["", ""],
    ];
    for (const [input, want] of cases) expect(normalizeCode(input)).toBe(want);
  });
});
