import { beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, render, waitFor } from "@testing-library/react";
import type { HitRate, TrackStats } from "../bindings";

const mocks = vi.hoisted(() => ({ trackStats: vi.fn(), taskResult: vi.fn() }));
vi.mock("../bindings", () => ({ commands: mocks }));

import HitRates, { hitCell, hitRows } from "./HitRates";
import ResultView from "./ResultView";
import { LanguageContext } from "../i18n";

const ok = <T,>(data: T) => ({ status: "ok", data });
const rate = (group: HitRate["group"], key: string, horizon: number, signals: number, hits: number, pending = 0): HitRate => ({
  group,
  key,
  horizon,
  signals,
  hits,
  pending,
  hit_rate_pct: signals > 0 ? (hits / signals) * 100 : null,
  mean_net_return_pct: null,
});
const stats: TrackStats = {
  screens: 12,
  signals: 143,
  horizons: [1, 20],
  rates: [
    rate("all", "all", 1, 143, 70),
    rate("all", "all", 20, 140, 80, 3),
    rate("trigger", "Spring", 1, 40, 20),
    rate("trigger", "Spring", 20, 0, 0, 2),
    rate("track", "Accum", 1, 60, 30),
    rate("regime", "RISK_ON", 20, 10, 6),
  ],
};

describe("tracked hit rates under a screen result", () => {
  beforeEach(() => {
    cleanup();
    vi.clearAllMocks();
  });

  it("words each cell with its count, and pending or missing ones as such", () => {
    expect(hitCell(rate("trigger", "Spring", 20, 143, 87), "en")).toBe("61% of 143");
    expect(hitCell(rate("trigger", "Spring", 20, 143, 87), "zh")).toBe("61%（143 次）");
    expect(hitCell(rate("trigger", "Spring", 20, 0, 0, 2), "en")).toBe("2 pending");
    expect(hitCell(undefined, "en")).toBe("—");
  });

  it("lists all signals, each trigger and each 水温, one cell per horizon (tracks left out)", () => {
    expect(hitRows(stats, "en")).toEqual([
      { group: "all", key: "All signals", cells: ["49% of 143", "57% of 140"] },
      { group: "trigger", key: "Spring", cells: ["50% of 40", "2 pending"] },
      { group: "regime", key: "水温 RISK_ON", cells: ["—", "60% of 10"] },
    ]);
  });

  it("shows the backend's figures on the screen result", async () => {
    mocks.trackStats.mockResolvedValue(ok(stats));
    mocks.taskResult.mockResolvedValue(ok({ as_of: "2020-06-16", candidates: [], regime: {} }));
    const task = {
      task_id: "bg_1_screen_stocks",
      tool_name: "screen_stocks",
      display_name: "全市场扫描",
      status: "completed",
      progress: { stage: "完成", detail: "", fraction: 1 },
      started_at: "2026-12-05T07:00:00Z",
    } as const;
    const { container } = render(
      <LanguageContext.Provider value="en">
        <ResultView task={task as never} onClose={() => {}} onAsk={() => {}} onOpenStock={() => {}} />
      </LanguageContext.Provider>,
    );
    await waitFor(() => expect(container.querySelector("#hit-rates table")).not.toBeNull());
    const rows = [...container.querySelectorAll("#hit-rates tbody tr")].map((tr) => tr.textContent);
    expect(rows[0]).toBe("All signals49% of 14357% of 140");
    expect(container.querySelector("#hit-rates .result-meta")?.textContent).toBe("12 saved screens · 143 signals · entry at the next open");
    expect(mocks.trackStats).toHaveBeenCalledTimes(1);
  });

  it("says when nothing is tracked yet", async () => {
    mocks.trackStats.mockResolvedValue(ok({ screens: 0, signals: 0, horizons: [1, 5, 10, 20], rates: [] }));
    const { container } = render(<HitRates />);
    await waitFor(() => expect(container.querySelector(".hit-rates-empty")).not.toBeNull());
    expect(container.querySelector(".hit-rates-empty")?.textContent).toBe("尚无跟踪记录。");
  });
});
