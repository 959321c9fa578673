// A hit-rate cell opens what it counts. On the review page it filters the
// signal list to those signals; under a screen result it lists them; either way each
// figure opens its stock at the bar.
import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { HitRate, Outcome, TrackedScreen, TrackStats } from "../bindings";
import { LanguageContext } from "../i18n";
import { OpenStockAtContext } from "./openAt";
import { countedRows, type SignalFilter } from "./reviewModel";

const mocks = vi.hoisted(() => ({ trackScreens: vi.fn(), trackStats: vi.fn() }));
vi.mock("../bindings", () => ({ commands: mocks }));

import HitRates from "../tasks/HitRates";
import ReviewPage from "./ReviewPage";

const ok = <T,>(data: T) => ({ status: "ok", data });
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
});

const done = (exit: number, ret: number): Outcome => ({
  status: "done",
  horizon: 1,
  entry_date: exit,
  entry_price: 10,
  exit_date: exit,
  exit_price: 10,
  shares: 100,
  fees: 10,
  pnl: ret * 10,
  net_return_pct: ret,
  mfe_pct: 0,
  mae_pct: 0,
  hit: ret > 0,
});
const pending: Outcome = { status: "pending", horizon: 5, bars_after: 1 };
const cand = (code: string, triggers: string[], h1: Outcome) => ({ code, name: `n${code}`, triggers, track: "Trend", score: 1, outcomes: [h1, pending] });
// 000001 is saved twice on 2020-01-02 (counted once, as first saved); 000002's next open
// was limit-up (no figures, not counted at 1 day, pending at 5).
const screens: TrackedScreen[] = [
  { id: 1, as_of: "2020-01-02", saved_at: "2020-01-02T08:00:00Z", origin: "tool", board: "all", regime: "RISK_ON", candidates: [cand("000001", ["Spring"], done(20200106, 3.99)), cand("600000", ["SOS"], done(20200106, -1.5))] },
  { id: 2, as_of: "2020-01-02", saved_at: "2020-01-02T09:00:00Z", origin: "cli", board: "all", regime: "RISK_ON", candidates: [cand("000001", ["Spring"], done(20200106, 3.99))] },
  {
    id: 3,
    as_of: "2020-01-03",
    saved_at: "2020-01-03T08:00:00Z",
    origin: "backfill",
    board: "all",
    regime: null,
    candidates: [cand("000002", ["Spring", "SOS"], { status: "no_entry", horizon: 1, entry_date: 20200106 }), cand("600036", ["Spring"], done(20200107, 2))],
  },
];
// The backend's figures for these screens, counted by hand.
const rate = (group: HitRate["group"], key: string, horizon: number, signals: number, hits: number, pend: number): HitRate => ({
  group,
  key,
  horizon,
  signals,
  hits,
  pending: pend,
  hit_rate_pct: signals > 0 ? (hits / signals) * 100 : null,
  mean_net_return_pct: null,
});
const stats: TrackStats = {
  screens: 3,
  signals: 4,
  horizons: [1, 5],
  rates: [
    rate("all", "all", 1, 3, 2, 0),
    rate("all", "all", 5, 0, 0, 4),
    rate("trigger", "Spring", 1, 2, 2, 0),
    rate("trigger", "Spring", 5, 0, 0, 3),
    rate("trigger", "SOS", 1, 1, 0, 0),
    rate("trigger", "SOS", 5, 0, 0, 2),
    rate("regime", "RISK_ON", 1, 2, 1, 0),
    rate("regime", "RISK_ON", 5, 0, 0, 2),
  ],
};

/** The hit-rate cell of a row (by its heading) at a horizon's column. */
function cell(row: string, col: number): HTMLElement {
  const tr = [...document.querySelectorAll("#hit-rates tbody tr")].find((r) => r.firstElementChild?.textContent === row);
  return tr?.children[col + 1].querySelector("button") as HTMLElement;
}
const listed = () => [...document.querySelectorAll("#review-signals tbody tr")].map((r) => r.getAttribute("data-code"));

describe("what a hit-rate cell counts", () => {
  it("matches the backend's count for every cell", () => {
    for (const r of stats.rates) {
      const f: SignalFilter = { group: r.group, key: r.key, horizon: r.horizon, status: r.signals > 0 ? "done" : "pending" };
      expect([r.group, r.key, r.horizon, countedRows(screens, f, "en").length]).toEqual([r.group, r.key, r.horizon, r.signals > 0 ? r.signals : r.pending]);
    }
    const spring = countedRows(screens, { group: "trigger", key: "Spring", horizon: 5, status: "pending" }, "en");
    expect(spring.map((r) => [r.day, r.code])).toEqual([
      [20200103, "000002"],
      [20200103, "600036"],
      [20200102, "000001"],
    ]);
  });
});

describe("review page", () => {
  it("a cell filters the list to the signals it counts; each return opens its exit bar", async () => {
    mocks.trackScreens.mockResolvedValue(ok(screens));
    mocks.trackStats.mockResolvedValue(ok(stats));
    const open = vi.fn();
    render(
      <LanguageContext.Provider value="en">
        <ReviewPage onOpenStock={open} />
      </LanguageContext.Provider>,
    );
    await waitFor(() => expect(listed()).toHaveLength(5));
    await waitFor(() => expect(cell("Spring", 0)).toBeTruthy());

    expect(cell("Spring", 0).textContent).toBe("100% of 2");
    fireEvent.click(cell("Spring", 0));
    expect(listed()).toEqual(["600036", "000001"]);
    expect(document.getElementById("review-filter")?.textContent).toContain("Spring · 1d: the 2 signals this hit rate counts, 2 of them up after fees");
    expect(cell("Spring", 0).getAttribute("aria-pressed")).toBe("true");
    fireEvent.click(screen.getByText("+2.00%"));
    expect(open).toHaveBeenLastCalledWith("600036", 20200107);

    fireEvent.click(cell("水温 RISK_ON", 0));
    expect(listed()).toEqual(["000001", "600000"]);
    expect(document.getElementById("review-filter")?.textContent).toContain("1 of them up after fees");

    fireEvent.click(cell("All signals", 1));
    expect(listed()).toEqual(["000002", "600036", "000001", "600000"]);
    expect(document.getElementById("review-filter")?.textContent).toContain("4 signals still waiting");

    fireEvent.click(document.getElementById("review-show-all") as HTMLElement);
    expect(listed()).toHaveLength(5);
    expect(document.getElementById("review-filter")).toBeNull();
  });
});

describe("under a screen result", () => {
  it("a cell lists the signals it counts, each opening its stock at the signal day or the exit bar", async () => {
    mocks.trackScreens.mockResolvedValue(ok(screens));
    mocks.trackStats.mockResolvedValue(ok(stats));
    const open = vi.fn();
    render(
      <LanguageContext.Provider value="en">
        <OpenStockAtContext.Provider value={open}>
          <HitRates />
        </OpenStockAtContext.Provider>
      </LanguageContext.Provider>,
    );
    await waitFor(() => expect(cell("SOS", 0)).toBeTruthy());
    expect(mocks.trackScreens).not.toHaveBeenCalled();
    fireEvent.click(cell("SOS", 0));
    await waitFor(() => expect(document.getElementById("hit-counted")).not.toBeNull());
    const rows = [...document.querySelectorAll("#hit-counted tbody tr")];
    expect(rows.map((r) => r.getAttribute("data-code"))).toEqual(["600000"]);
    expect(document.querySelector("#hit-counted .result-meta")?.textContent).toBe("SOS · 1d: the 1 signals this hit rate counts, 0 of them up after fees");
    fireEvent.click(screen.getByText("-1.50%"));
    expect(open).toHaveBeenLastCalledWith("600000", 20200106);
    fireEvent.click(screen.getByText("2020-01-02 600000 n600000"));
    expect(open).toHaveBeenLastCalledWith("600000", 20200102);
    // The same cell again closes the list.
    fireEvent.click(cell("SOS", 0));
    expect(document.getElementById("hit-counted")).toBeNull();
  });
});
