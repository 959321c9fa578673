import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { PortfolioPage, PositionRow } from "../bindings";

const mocks = vi.hoisted(() => ({ portfolioPage: vi.fn(), portfolioEdit: vi.fn(), portfolioRisk: vi.fn(), liveQuotes: vi.fn() }));
vi.mock("../bindings", () => ({ commands: mocks }));

import { LanguageContext } from "../i18n";
import Portfolio from "./Portfolio";

const ok = <T,>(data: T) => ({ status: "ok", data });

const row = (over: Partial<PositionRow> = {}): PositionRow => ({
  code: "000001",
  name: "平安银行",
  shares: 1000,
  cost: 12.5,
  buy_dt: "2020-01-02",
  stop_loss: null,
  target_price: null,
  last: 12.91,
  last_date: "2020-06-16",
  data_status: "stale",
  market_value: 12910,
  pnl_amount: 410,
  pnl_pct: 3.28,
  weight_pct: 100,
  health: "🟡警戒",
  health_reasons: ["跌破 MA20"],
  verdict: "观察",
  error: null,
  ...over,
});

const page = (positions: PositionRow[]): PortfolioPage => ({
  positions,
  free_cash: 5000,
  cash_from_ledger: false,
  total_market_value: positions.length ? 12910 : null,
  total_assets: positions.length ? 17910 : null,
  data_status: "stale",
  as_of: positions.length ? "2020-06-16" : null,
  without_quotes: 0,
});

const type = (id: string, value: string) => fireEvent.change(document.getElementById(id) as HTMLInputElement, { target: { value } });
const click = async (el: Element) => {
  await act(async () => {
    fireEvent.click(el);
  });
};

// The account risk section's figures, as the backend gives them.
const risk = {
  risk: {
    equity_fen: 11_000_000,
    limits: { max_heat_bp: 600, max_industry_bp: 3000, max_positions: 1, drawdown_brake_bp: 1500, max_stop_outs: 3, stop_out_days: 10 },
    heat_fen: 50_000,
    heat_pct: 0.45,
    positions: 1,
    largest_industry: { industry: "汽车", value_fen: 500_000, share_pct: 4.55 },
    drawdown_pct: 16.2,
    recent_stop_outs: 0,
    brake: [{ type: "drawdown", drawdown_pct: 16.2, limit_pct: 15 }],
    unstopped: [],
    unclassified: [],
  },
  equity_source: { type: "ledger", date: "2020-06-16" },
  cash_fen: 10_500_000,
  notes: ["账户净值：估值为近似值"],
};

beforeEach(() => {
  mocks.portfolioPage.mockResolvedValue(ok(page([])));
  mocks.portfolioRisk.mockResolvedValue(ok(risk));
  mocks.liveQuotes.mockResolvedValue(ok([]));
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
});

describe("portfolio page", () => {
  it("shows the account's risk: heat, the largest industry, positions against the limit and the brake", async () => {
    render(<Portfolio onOpen={() => {}} />);
    await waitFor(() => expect(document.getElementById("pf-risk")).not.toBeNull());
    const text = (id: string) => document.getElementById(id)?.textContent ?? "";
    expect(text("pf-risk-heat")).toContain("500.00 (0.45%)");
    expect(text("pf-risk-heat")).toContain("6%");
    expect(text("pf-risk-industry")).toContain("汽车 4.55%");
    expect(text("pf-risk-positions")).toContain("1");
    expect(text("pf-risk-brake")).toContain("已触发");
    expect(text("pf-risk-brake")).toContain("净值回撤 16.20% ≥ 刹车线 15.00%");
    expect(text("pf-risk")).toContain("2020-06-16");
  });

  it("during the session a holding's live price stands beside its cached close", async () => {
    mocks.portfolioPage.mockResolvedValue(ok(page([row()])));
    const prev = 12_910_000;
    mocks.liveQuotes.mockResolvedValue(
      ok([
        {
          quote: { code: "000001", name: "平安银行", last_e6: 12_780_000, prev_close_e6: prev, open_e6: prev, high_e6: prev, low_e6: 12_700_000, volume: 1, amount_fen: 1, time: "2020-06-17 13:15:00", source: "eastmoney" },
          partial: { date: 20200617, open_e6: prev, high_e6: prev, low_e6: 12_700_000, last_e6: 12_780_000, volume: 1, amount_fen: 1, time: "13:15", partial: true },
          phase: { type: "afternoon" },
          live: true,
        },
      ]),
    );
    render(<Portfolio onOpen={() => {}} />);
    await waitFor(() => expect(document.getElementById("pf-live-head")?.textContent).toBe("盘中"));
    expect(mocks.liveQuotes).toHaveBeenCalledWith(["000001"]);
    const cell = document.querySelector("tr[data-code='000001'] .pf-live") as HTMLElement;
    expect(cell.textContent).toBe("12.78 -1.01% · 13:15");
    expect(cell.className).toContain("down");
    expect(document.querySelector("tr[data-code='000001'] .pf-last")?.getAttribute("data-value")).toBe("12.91");
  });

  it("adds a position and shows its last price with the price's date, P/L and the engine's verdict", async () => {
    const onOpen = vi.fn();
    mocks.portfolioEdit.mockResolvedValue(ok(page([row()])));
    render(<Portfolio onOpen={onOpen} />);
    await screen.findByText("还没有持仓。用下面的表单添加一笔。");
    type("pf-code", "000001");
    type("pf-shares-input", "1000");
    type("pf-cost-input", "12.5");
    type("pf-buy-date", "2020-01-02");
    await click(document.getElementById("pf-submit") as HTMLElement);
    expect(mocks.portfolioEdit).toHaveBeenCalledWith({ type: "add", code: "000001", shares: 1000, cost_price: 12.5, buy_dt: "2020-01-02" });
    const tr = document.querySelector('tr.pf-row[data-code="000001"]') as HTMLElement;
    expect(tr.querySelector(".pf-last")?.textContent).toBe("12.91");
    expect(tr.querySelector(".pf-date")?.textContent).toBe("2020-06-16 (陈旧)");
    expect(tr.querySelector(".pf-pnl")?.textContent).toBe("410.00");
    expect(tr.querySelector(".pf-pnl")?.className).toContain("up");
    expect(tr.querySelector(".pf-pnl-pct")?.textContent).toBe("+3.28%");
    expect(tr.querySelector(".pf-verdict")?.textContent).toBe("观察");
    expect(document.getElementById("pf-cash")?.textContent).toBe("5,000.00");
    await click(tr.querySelector(".pf-open") as HTMLElement);
    expect(onOpen).toHaveBeenCalledWith("000001");
  });

  it("shows the ledger's cash as the free cash, with no form to set another, once the ledger records transfers", async () => {
    mocks.portfolioPage.mockResolvedValue(ok({ ...page([]), free_cash: 105_000, cash_from_ledger: true }));
    render(<Portfolio onOpen={() => {}} />);
    await waitFor(() => expect(document.getElementById("pf-cash-from-ledger")).not.toBeNull());
    const cash = document.getElementById("pf-cash") as HTMLElement;
    expect(cash.dataset.source).toBe("ledger");
    expect(cash.textContent).toContain("105,000.00");
    expect(cash.textContent).toContain("来自账本");
    expect(document.getElementById("pf-cash-input")).toBeNull();
    expect(document.getElementById("pf-cash-submit")).toBeNull();
  });

  it("keeps the cash form while the ledger records no transfer", async () => {
    render(<Portfolio onOpen={() => {}} />);
    await waitFor(() => expect(document.getElementById("pf-cash")).not.toBeNull());
    expect(document.getElementById("pf-cash")?.dataset.source).toBe("stated");
    expect(document.getElementById("pf-cash-from-ledger")).toBeNull();
    expect(document.getElementById("pf-cash-input")).not.toBeNull();
  });

  it("says a holding without a price has none instead of showing a number", async () => {
    mocks.portfolioPage.mockResolvedValue(
      ok({
        ...page([row({ last: null, last_date: null, pnl_amount: null, pnl_pct: null, health: null, verdict: null, error: "无行情数据", data_status: "unavailable" })]),
        without_quotes: 1,
      }),
    );
    render(
      <LanguageContext.Provider value="en">
        <Portfolio onOpen={() => {}} />
      </LanguageContext.Provider>,
    );
    await waitFor(() => expect(document.querySelector(".pf-last")).toBeTruthy());
    expect(document.querySelector(".pf-last")?.textContent).toBe("no price");
    expect(document.querySelector(".pf-pnl")?.textContent).toBe("—");
    expect(document.querySelector(".pf-health")?.textContent).toBe("No market data");
    expect(document.getElementById("pf-without-quotes")?.textContent).toBe(
      "1 holding(s) have no local prices: total value and weights cover the others only",
    );
  });

  it("shows the backend's refusal next to the form and keeps the table as it was", async () => {
    mocks.portfolioPage.mockResolvedValue(ok(page([row()])));
    mocks.portfolioEdit.mockResolvedValue({ status: "error", error: { kind: "invalid_input", message: "cost_price 必须大于 0", code: null } });
    render(<Portfolio onOpen={() => {}} />);
    await waitFor(() => expect(document.querySelector(".pf-row")).toBeTruthy());
    type("pf-code", "000338");
    type("pf-shares-input", "100");
    type("pf-cost-input", "-1");
    await click(document.getElementById("pf-submit") as HTMLElement);
    expect(document.getElementById("pf-error")?.textContent).toBe("cost_price 必须大于 0");
    expect(document.querySelectorAll(".pf-row")).toHaveLength(1);
    // not a number: said here, nothing sent
    mocks.portfolioEdit.mockClear();
    type("pf-cost-input", "abc");
    await click(document.getElementById("pf-submit") as HTMLElement);
    expect(mocks.portfolioEdit).not.toHaveBeenCalled();
    expect(document.getElementById("pf-error")?.textContent).toBe("成本 必须是数字");
  });

  it("edits shares and cost of a row and removes it", async () => {
    mocks.portfolioPage.mockResolvedValue(ok(page([row()])));
    render(<Portfolio onOpen={() => {}} />);
    await waitFor(() => expect(document.querySelector(".pf-row")).toBeTruthy());
    await click(document.querySelector(".pf-edit") as HTMLElement);
    expect((document.getElementById("pf-code") as HTMLInputElement).disabled).toBe(true);
    mocks.portfolioEdit.mockResolvedValueOnce(ok(page([row({ shares: 1500 })])));
    type("pf-shares-input", "1500");
    await click(document.getElementById("pf-submit") as HTMLElement);
    expect(mocks.portfolioEdit).toHaveBeenLastCalledWith({ type: "update", code: "000001", shares: 1500, cost_price: 12.5 });
    expect(document.querySelector(".pf-shares")?.textContent).toBe("1,500");
    mocks.portfolioEdit.mockResolvedValueOnce(ok(page([])));
    await click(document.querySelector(".pf-remove") as HTMLElement);
    expect(mocks.portfolioEdit).toHaveBeenLastCalledWith({ type: "remove", code: "000001" });
    expect(document.querySelector(".pf-row")).toBeNull();
  });
});
