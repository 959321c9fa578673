import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import type { Value } from "../bindings";
import { OpenStockAtContext } from "./openAt";
import TradesTable, { tradeRows } from "./TradesTable";

afterEach(cleanup);

// The tool's JSON as it arrives (the second trade has no code and is skipped).
const result = {
  trades: [
    { code: "000001", name: "平安银行", signal_date: "2020-01-02", entry_date: "2020-01-03", entry_price: 16.5, exit_date: "2020-01-17", exit_price: 17.1, pnl_pct: 3.2 },
    { name: "no code" },
  ],
} as unknown as Value;

describe("backtest trades", () => {
  it("reads the tool's trades", () => {
    expect(tradeRows(result)).toEqual([{ code: "000001", name: "平安银行", entry: 20200103, entryPrice: 16.5, exit: 20200117, exitPrice: 17.1, pnlPct: 3.2 }]);
    expect(tradeRows({})).toEqual([]);
  });

  it("opens the stock at the entry and the exit bar", () => {
    const open = vi.fn();
    render(
      <OpenStockAtContext.Provider value={open}>
        <TradesTable result={result} />
      </OpenStockAtContext.Provider>,
    );
    fireEvent.click(screen.getByText("2020-01-03 @ 16.5"));
    expect(open).toHaveBeenLastCalledWith("000001", 20200103);
    fireEvent.click(screen.getByText("2020-01-17 @ 17.1"));
    expect(open).toHaveBeenLastCalledWith("000001", 20200117);
  });
});
