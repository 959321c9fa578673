// A screen row's close opens the bar it is — the screen's day, or for a
// suspended stock the last bar it had before it (the candidate's bars_as_of).
import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { OpenStockAtContext } from "../review/openAt";

const mocks = vi.hoisted(() => ({ trackStats: vi.fn(), taskResult: vi.fn() }));
vi.mock("../bindings", () => ({ commands: mocks }));

import ResultView from "./ResultView";

const ok = <T,>(data: T) => ({ status: "ok", data });
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
});

// As screen_stocks returns it (ISO dates); 600000 was suspended from 2020-06-12.
const result = {
  as_of: "2020-06-16",
  regime: {},
  candidates: [
    { code: "000001", name: "平安银行", channel: "潜伏通道", triggers: [{ kind: "Spring" }], score: 2, stage: null, last_close: 13.05, bars_as_of: "2020-06-16" },
    { code: "600000", name: "浦发银行", channel: "吸筹通道", triggers: [{ kind: "SOS" }], score: 1, stage: null, last_close: 10.71, bars_as_of: "2020-06-11" },
  ],
};
const task = {
  task_id: "bg_1_screen_stocks",
  tool_name: "screen_stocks",
  display_name: "全市场扫描",
  status: "completed",
  progress: { stage: "完成", detail: "", fraction: 1 },
  started_at: "2026-12-05T07:00:00Z",
} as const;

describe("a screen row's close", () => {
  it("opens the stock at the bar the close is", async () => {
    mocks.trackStats.mockResolvedValue(ok({ screens: 0, signals: 0, horizons: [1, 5, 10, 20], rates: [] }));
    mocks.taskResult.mockResolvedValue(ok(result));
    const open = vi.fn();
    render(
      <OpenStockAtContext.Provider value={open}>
        <ResultView task={task as never} onClose={() => {}} onAsk={() => {}} onOpenStock={() => {}} />
      </OpenStockAtContext.Provider>,
    );
    fireEvent.click(await screen.findByText("13.05"));
    expect(open).toHaveBeenLastCalledWith("000001", 20200616);
    fireEvent.click(screen.getByText("10.71"));
    expect(open).toHaveBeenLastCalledWith("600000", 20200611);
    expect(open).toHaveBeenCalledTimes(2);
  });

  it("is plain text where no stock page can be opened", async () => {
    mocks.trackStats.mockResolvedValue(ok({ screens: 0, signals: 0, horizons: [1, 5, 10, 20], rates: [] }));
    mocks.taskResult.mockResolvedValue(ok(result));
    render(<ResultView task={task as never} onClose={() => {}} onAsk={() => {}} onOpenStock={() => {}} />);
    await waitFor(() => expect(screen.getByText("13.05")).toBeTruthy());
    expect(screen.getByText("13.05").tagName).toBe("TD");
  });
});
