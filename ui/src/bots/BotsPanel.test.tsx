import { describe, expect, it, vi, beforeEach } from "vitest";
import { render, screen, fireEvent, waitFor, cleanup } from "@testing-library/react";
import type { BotsView } from "../bindings";

const mocks = vi.hoisted(() => ({
  botsView: vi.fn(),
  botPair: vi.fn(),
  botSetApprover: vi.fn(),
  botUnpair: vi.fn(),
}));
vi.mock("../bindings", () => ({ commands: mocks }));

import BotsPanel, { normalizeCode } from "./BotsPanel";

const waiting: BotsView = {
  bots: [{ name: "tg", kind: "telegram", token_set: true, daily_tokens: 200000, per_minute: 6, senders: [] }],
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
    fireEvent.click(screen.getByText("批准配对", { selector: "li button" }));
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

  it("normalizes a typed code as the backend does", () => {
    const cases: [string, string][] = [
      ["k7pq 2mab", "K7PQ2MAB"],
      ["K7PQ-2MAB", "K7PQ2MAB"],
      ["", ""],
    ];
    for (const [input, want] of cases) expect(normalizeCode(input)).toBe(want);
  });
});
