import { beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, render, screen, waitFor } from "@testing-library/react";
import type { LiveQuote, WatchlistRow } from "../bindings";

const mocks = vi.hoisted(() => ({ watchlist: vi.fn(), watchlistRemove: vi.fn(), liveQuotes: vi.fn() }));
vi.mock("../bindings", () => ({ commands: mocks }));

import { LanguageContext } from "../i18n";
import Watchlist from "./Watchlist";

const ok = <T,>(data: T) => ({ status: "ok", data });

const row = (code: string, last: number): WatchlistRow => ({
  code,
  name: code === "000001" ? "平安银行" : "贵州茅台",
  last,
  change_pct: 0.5,
  health: "🟢健康",
  stage: "吸筹",
  as_of: 20200616,
  data_status: "stale",
  added_at: "2020-06-16T00:00:00Z",
});

/** 000001's quote at 10:42: 13.05 against a previous close of 12.89. */
const quote = (live: boolean): LiveQuote => ({
  quote: {
    code: "000001",
    name: "平安银行",
    last_e6: 13_050_000,
    prev_close_e6: 12_890_000,
    open_e6: 12_900_000,
    high_e6: 13_100_000,
    low_e6: 12_880_000,
    volume: 1_000_000,
    amount_fen: 1_300_000_000,
    time: "2020-06-17 10:42:03",
    source: "tencent",
  },
  partial: {
    date: 20200617,
    open_e6: 12_900_000,
    high_e6: 13_100_000,
    low_e6: 12_880_000,
    last_e6: 13_050_000,
    volume: 1_000_000,
    amount_fen: 1_300_000_000,
    time: "10:42",
    partial: true,
  },
  phase: live ? { type: "morning" } : { type: "after_close" },
  live,
});

describe("Watchlist", () => {
  beforeEach(() => {
    cleanup();
    vi.clearAllMocks();
    mocks.watchlist.mockResolvedValue(ok([row("000001", 12.89), row("600519", 1450)]));
  });

  it("during the session shows each stock's live price as of its quote beside the close", async () => {
    mocks.liveQuotes.mockResolvedValue(ok([quote(true)]));
    render(
      <LanguageContext.Provider value="en">
        <Watchlist onOpen={() => {}} />
      </LanguageContext.Provider>,
    );
    await waitFor(() => expect(document.getElementById("watch-live-head")?.textContent).toBe("Live"));
    expect(mocks.liveQuotes).toHaveBeenCalledWith(["000001", "600519"]);
    const live = document.querySelector("tr[data-code='000001'] .watch-live") as HTMLElement;
    expect(live.textContent).toBe("13.05 +1.24% · 10:42");
    expect(live.className).toContain("up");
    // the cached close stays as it was; a stock without a quote of today gets a dash
    expect(screen.getByText("12.89")).toBeTruthy();
    expect(document.querySelector("tr[data-code='600519'] .watch-live")?.textContent).toBe("—");
  });

  it("outside the session, or with no source, shows the closes alone", async () => {
    mocks.liveQuotes.mockResolvedValueOnce(ok([quote(false)]));
    render(<Watchlist onOpen={() => {}} />);
    await screen.findByText("12.89");
    await waitFor(() => expect(mocks.liveQuotes).toHaveBeenCalledTimes(1));
    expect(document.getElementById("watch-live-head")).toBeNull();
    expect(document.querySelector(".watch-live")).toBeNull();

    cleanup();
    mocks.liveQuotes.mockResolvedValueOnce({ status: "error", error: { kind: "unavailable", message: "offline" } });
    render(<Watchlist onOpen={() => {}} />);
    await screen.findByText("12.89");
    await waitFor(() => expect(mocks.liveQuotes).toHaveBeenCalledTimes(2));
    expect(document.getElementById("watch-live-head")).toBeNull();
  });
});
