import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import type { TrackedScreen } from "../bindings";
import { barDate } from "./openAt";
import { outcomeCell, signalRows } from "./reviewModel";

const mocks = vi.hoisted(() => ({ trackScreens: vi.fn(), trackStats: vi.fn() }));
vi.mock("../bindings", () => ({ commands: mocks }));

import ReviewPage from "./ReviewPage";

const ok = <T,>(data: T) => ({ status: "ok", data });

const done = {
  status: "done" as const,
  horizon: 1,
  entry_date: 20200103,
  entry_price: 10,
  exit_date: 20200106,
  exit_price: 10.5,
  shares: 100,
  fees: 10.06,
  pnl: 39.94,
  net_return_pct: 3.99,
  mfe_pct: 5,
  mae_pct: -1,
  hit: true,
};
const screens: TrackedScreen[] = [
  {
    id: 1,
    as_of: "2020-01-02",
    saved_at: "2020-01-02T08:00:00Z",
    origin: "tool",
    board: "all",
    regime: "RISK_ON",
    candidates: [{ code: "000001", name: "平安银行", triggers: ["Spring"], track: "Trend", score: 1, outcomes: [done, { status: "pending", horizon: 5, bars_after: 2 }] }],
  },
  {
    id: 2,
    as_of: "2020-01-03",
    saved_at: "2020-01-03T08:00:00Z",
    origin: "backfill",
    board: "all",
    regime: null,
    candidates: [{ code: "600000", name: "浦发银行", triggers: ["SOS", "LPS"], track: "Trend", score: 1, outcomes: [{ status: "no_entry", horizon: 1, entry_date: 20200106 }, { status: "pending", horizon: 5, bars_after: 0 }] }],
  },
];

afterEach(() => {
  cleanup();
  vi.clearAllMocks();
});

describe("review model", () => {
  it("words each outcome with the bar it came from", () => {
    expect(outcomeCell(done, "en")).toEqual({ text: "+3.99%", at: 20200106, status: "done" });
    expect(outcomeCell({ ...done, net_return_pct: -1.5 }, "en").text).toBe("-1.50%");
    expect(outcomeCell({ status: "pending", horizon: 20, bars_after: 3 }, "zh")).toEqual({ text: "待定 3/20", at: null, status: "pending" });
    expect(outcomeCell({ status: "no_entry", horizon: 1, entry_date: 20200106 }, "en").at).toBe(20200106);
  });

  it("lists the newest screen first", () => {
    const rows = signalRows(screens, "en");
    expect(rows.map((r) => [r.day, r.code, r.triggers, r.regime])).toEqual([
      [20200103, "600000", "SOS LPS", "—"],
      [20200102, "000001", "Spring", "RISK_ON"],
    ]);
  });

  it("reads bar dates in any spelling", () => {
    expect(barDate("2020-01-02")).toBe(20200102);
    expect(barDate(20200102)).toBe(20200102);
    expect(barDate("soon")).toBeNull();
    expect(barDate(null)).toBeNull();
  });
});

describe("review page", () => {
  it("opens the stock at the signal day, or at a return's exit day", async () => {
    mocks.trackScreens.mockResolvedValue(ok(screens));
    mocks.trackStats.mockResolvedValue(ok({ screens: 2, signals: 2, horizons: [1, 5], rates: [] }));
    const open = vi.fn();
    render(<ReviewPage onOpenStock={open} />);
    fireEvent.click(await screen.findByText("000001 平安银行"));
    expect(open).toHaveBeenLastCalledWith("000001", 20200102);
    fireEvent.click(screen.getByText("+3.99%"));
    expect(open).toHaveBeenLastCalledWith("000001", 20200106);
    expect(open).toHaveBeenCalledTimes(2);
    expect(screen.getAllByText(/待定/).length).toBe(2);
  });
});
