import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { DayValue, Difference, EntryRow, ExitReview, FillRow, ImportOutcome, JournalReport, PortfolioPage, PositionRow, Reconciliation } from "../bindings";

const mocks = vi.hoisted(() => ({
  journalReport: vi.fn(),
  journalRecordFill: vi.fn(),
  journalRecordCash: vi.fn(),
  journalImport: vi.fn(),
  journalReconciliation: vi.fn(),
  portfolioPage: vi.fn(),
  portfolioEdit: vi.fn(),
  portfolioRisk: vi.fn(),
}));
vi.mock("../bindings", () => ({ commands: mocks }));
const charted = vi.hoisted(() => ({ data: [] as unknown[] }));
vi.mock("lightweight-charts", () => ({
  ColorType: { Solid: "solid" },
  LineSeries: {},
  createChart: () => ({
    addSeries: () => ({ setData: (d: unknown[]) => charted.data.push(d) }),
    timeScale: () => ({ fitContent: () => {} }),
    remove: () => {},
  }),
}));

import { LanguageContext } from "../i18n";
import { OpenStockContext } from "../chat/stockLinks";
import { OpenStockAtContext } from "../review/openAt";
import Portfolio from "../pages/Portfolio";
import AccountActivity from "./AccountActivity";
import ExitReviews from "./ExitReviews";
import Journal from "./Journal";
import ReconciliationView from "./Reconciliation";
import DailyValue from "./DailyValue";
import FillsList from "./FillsList";
import ImportFills from "./ImportFills";
import RecordCashForm from "./RecordCashForm";
import RecordFillForm from "./RecordFillForm";

const ok = <T,>(data: T) => ({ status: "ok", data });
const refused = (message: string) => ({ status: "error", error: { kind: "invalid_input", message, code: null } });

// buy 1000 × 16.00 on 2020-01-02: fees 5.00 + 0.16 by the rules (cli_journal checks them by hand)
const buy: FillRow = {
  id: 1,
  code: "000001",
  name: "平安银行",
  side: "buy",
  date: "2020-01-02",
  price: 16,
  shares: 1000,
  amount_fen: 1_600_000,
  fees: { commission_fen: 500, stamp_fen: 0, transfer_fen: 16 },
  fees_total_fen: 516,
  fees_computed: true,
  source: "manual",
  realised_fen: null,
};
// sell 400 × 14.00 on 2020-03-02: 5.00 + 5.60 + 0.06; P/L 5,600 − 10.66 − 6,402.06
const sell: FillRow = {
  ...buy,
  id: 2,
  side: "sell",
  date: "2020-03-02",
  price: 14,
  shares: 400,
  amount_fen: 560_000,
  fees: { commission_fen: 500, stamp_fen: 560, transfer_fen: 6 },
  fees_total_fen: 1066,
  realised_fen: -81_272,
};

const report = (fills: FillRow[], over: Partial<JournalReport> = {}): JournalReport => ({
  summary: {
    fills,
    positions: [],
    realised_fen: fills.reduce((a, f) => a + (f.realised_fen ?? 0), 0),
    fees_fen: fills.reduce((a, f) => a + f.fees_total_fen, 0),
    entries: [],
    cash_fen: 0,
    repo_fen: 0,
    subscription_fen: 0,
    totals: { transfers_in_fen: 0, transfers_out_fen: 0, implied_in_fen: 0, fees_fen: 0, dividends_fen: 0, interest_fen: 0, taxes_fen: 0 },
    transfers_on_record: false,
    implied: [],
  },
  values: [],
  performance: { first: null, last: null, nav_fen: 0, cash_fen: 0, twr_pct: null, max_drawdown_pct: null, approximate: [], notes: [], holdings: [] },
  reviews: [],
  ...over,
});

const type = (id: string, value: string) => fireEvent.change(document.getElementById(id) as HTMLInputElement, { target: { value } });
const click = async (el: Element) => {
  await act(async () => {
    fireEvent.click(el);
  });
};
const byId = (id: string) => document.getElementById(id) as HTMLElement;

const noRecord: Reconciliation = { has_cash_balance: false, has_shares_balance: false, checked: 0, closing: [], differences: [] };

beforeEach(() => {
  mocks.journalReport.mockResolvedValue(ok(report([])));
  mocks.journalReconciliation.mockResolvedValue(ok(noRecord));
  // the portfolio page's risk section is the risk views' to test: never answered here
  mocks.portfolioRisk.mockReturnValue(new Promise(() => {}));
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
});

describe("record a fill", () => {
  it("sends the form as a FillForm, empty fees meaning the backtest's rules, and says what was recorded", async () => {
    const onRecorded = vi.fn();
    const after = report([buy, sell]);
    mocks.journalRecordFill.mockResolvedValue(ok(after));
    render(<RecordFillForm onRecorded={onRecorded} />);
    expect(byId("jf-fees-hint").textContent).toContain("费用留空：按回测的费率计算");
    await click(byId("jf-side-sell"));
    expect(byId("jf-side-sell").getAttribute("aria-pressed")).toBe("true");
    type("jf-code", " 000001 ");
    type("jf-date", "2020-03-02");
    type("jf-price", "14.00");
    type("jf-shares", "400");
    await click(byId("jf-submit"));
    expect(mocks.journalRecordFill).toHaveBeenCalledWith({ side: "sell", code: "000001", date: "2020-03-02", price: 14, shares: 400, fees: null });
    expect(onRecorded).toHaveBeenCalledWith(after);
    expect(byId("jf-done").textContent).toBe("已记录：卖出 000001 400 股 @ 14.00，费用 10.66（按回测费率）");
    expect(document.getElementById("jf-error")).toBeNull();

    // fees given: their total in yuan
    await click(byId("jf-side-buy"));
    type("jf-price", "16");
    type("jf-shares", "1,000");
    type("jf-fees", "12.34");
    await click(byId("jf-submit"));
    expect(mocks.journalRecordFill).toHaveBeenLastCalledWith({ side: "buy", code: "000001", date: "2020-03-02", price: 16, shares: 1000, fees: 12.34 });
  });

  it("shows the backend's refusal beside the form, and text that is no number without sending", async () => {
    const onRecorded = vi.fn();
    mocks.journalRecordFill.mockResolvedValue(refused("卖出 500 股超过当时持仓 400 股"));
    render(<RecordFillForm onRecorded={onRecorded} />);
    await click(byId("jf-side-sell"));
    type("jf-code", "000001");
    type("jf-price", "14");
    type("jf-shares", "500");
    await click(byId("jf-submit"));
    expect(byId("jf-error").textContent).toBe("卖出 500 股超过当时持仓 400 股");
    expect(onRecorded).not.toHaveBeenCalled();
    // the typed figures stay for correcting
    expect((byId("jf-shares") as HTMLInputElement).value).toBe("500");

    mocks.journalRecordFill.mockClear();
    type("jf-price", "abc");
    await click(byId("jf-submit"));
    expect(mocks.journalRecordFill).not.toHaveBeenCalled();
    expect(byId("jf-error").textContent).toBe("成交价 必须是数字");
  });

  it("says a fixed refusal in English on the English page", async () => {
    mocks.journalRecordFill.mockResolvedValue(refused("成交价格必须大于 0"));
    render(
      <LanguageContext.Provider value="en">
        <RecordFillForm onRecorded={() => {}} />
      </LanguageContext.Provider>,
    );
    type("jf-code", "000001");
    type("jf-price", "0");
    type("jf-shares", "100");
    await click(byId("jf-submit"));
    expect(byId("jf-error").textContent).toBe("The price must be greater than 0");
  });
});

describe("import a 交割单", () => {
  const choose = async (text: string) => {
    const file = new File([new TextEncoder().encode(text)], "jiaogedan.csv", { type: "text/csv" });
    await act(async () => {
      fireEvent.change(byId("ji-file"), { target: { files: [file] } });
    });
  };

  it("sends the file's bytes and lists every bad line, saying nothing was imported", async () => {
    const onImported = vi.fn();
    mocks.journalImport.mockResolvedValue(refused("2 行有错误，未导入任何记录：第 5 行 成交价格无效：abc；第 7 行 卖出 100 股超过当时持仓 0 股"));
    render(<ImportFills onImported={onImported} />);
    await choose("成交日期,证券代码\n");
    await waitFor(() => expect(document.getElementById("ji-error")).toBeTruthy());
    expect(mocks.journalImport).toHaveBeenCalledWith(Array.from(new TextEncoder().encode("成交日期,证券代码\n")));
    const lines = [...document.querySelectorAll(".ji-bad-line")];
    expect(lines.map((l) => l.getAttribute("data-line"))).toEqual(["5", "7"]);
    expect(lines[0].textContent).toBe("第 5 行 成交价格无效：abc");
    expect(lines[1].textContent).toBe("第 7 行 卖出 100 股超过当时持仓 0 股");
    expect(byId("ji-error").textContent).toContain("jiaogedan.csv 未导入任何记录");
    expect(byId("ji-nothing").textContent).toContain("没有导入任何一行");
    expect(onImported).not.toHaveBeenCalled();
  });

  it("a refusal about the whole file is shown as it came", async () => {
    mocks.journalImport.mockResolvedValue(refused("找不到表头：需要 成交日期、证券代码、操作/买卖标志、成交数量、成交价格 等列"));
    render(<ImportFills onImported={() => {}} />);
    await choose("hello\n");
    await waitFor(() => expect(document.getElementById("ji-error-message")).toBeTruthy());
    expect(byId("ji-error-message").textContent).toContain("找不到表头");
    expect(document.querySelectorAll(".ji-bad-line")).toHaveLength(0);
  });

  const noBalances: Reconciliation = { has_cash_balance: false, has_shares_balance: false, checked: 0, closing: [], differences: [] };
  const outcome = (o: Partial<ImportOutcome>): ImportOutcome => ({
    imported: 0,
    duplicates: 0,
    skipped: [],
    realised_fen: 0,
    message: "",
    by_kind: [],
    ignored: [],
    encoding: "gbk",
    fees_computed: 0,
    reconciliation: noBalances,
    ...o,
  });

  it("says how many entries came in, what was already there and which rows were not understood", async () => {
    const onImported = vi.fn();
    mocks.journalImport.mockResolvedValue(
      ok(outcome({ imported: 3, duplicates: 2, skipped: [{ line: 3, business: "密码修改" }], ignored: [{ line: 9, text: "合计,,,,155802.87" }], realised_fen: -121_658 })),
    );
    render(<ImportFills onImported={onImported} />);
    await choose("x");
    await waitFor(() => expect(document.getElementById("ji-done")).toBeTruthy());
    expect(byId("ji-done").textContent).toContain("已导入 3 条记录（jiaogedan.csv），已实现盈亏 -1,216.58");
    expect(byId("ji-duplicates").textContent).toBe("2 条已在账中，未重复记录。");
    expect(byId("ji-skipped").textContent).toBe("第 3 行 密码修改");
    expect(byId("ji-ignored").textContent).toBe("第 9 行 合计,,,,155802.87");
    expect(byId("ji-reconcile").textContent).toBe("文件没有股份余额、资金余额列，未对账。");
    expect(onImported).toHaveBeenCalledTimes(1);
  });

  it("names every balance the statement states that the ledger does not derive", async () => {
    const cash: Difference = { kind: "cash", code: null, date: "2023-12-21", line: 19, statement: 20_580_287, derived: 20_279_784 };
    const shares: Difference = { kind: "shares", code: "600036", date: "2023-11-10", line: 16, statement: 0, derived: 150 };
    mocks.journalImport.mockResolvedValue(
      ok(outcome({ imported: 20, reconciliation: { has_cash_balance: true, has_shares_balance: true, checked: 31, closing: [cash], differences: [shares, cash] } })),
    );
    render(<ImportFills onImported={() => {}} />);
    await choose("x");
    await waitFor(() => expect(document.getElementById("ji-reconcile")).toBeTruthy());
    expect(byId("ji-reconcile").querySelector("p")?.textContent).toBe("对账：31 个余额中 2 个与账本不一致：");
    const rows = [...document.querySelectorAll(".ji-difference")];
    expect(rows.map((r) => r.getAttribute("data-line"))).toEqual(["16", "19"]);
    expect(rows[0].textContent).toBe("2023-11-10 600036 股份余额 0 股，账本 150 股（第 16 行）");
    expect(rows[1].textContent).toBe("2023-12-21 资金余额 205,802.87，账本 202,797.84（第 19 行）");
  });

  it("a statement that agrees with the ledger says so in one line", async () => {
    mocks.journalImport.mockResolvedValue(ok(outcome({ imported: 20, reconciliation: { ...noBalances, has_cash_balance: true, checked: 31 } })));
    render(<ImportFills onImported={() => {}} />);
    await choose("x");
    await waitFor(() => expect(document.getElementById("ji-reconcile")).toBeTruthy());
    expect(byId("ji-reconcile").textContent).toBe("对账：31 个余额与账本一致。");
  });
});

describe("fills, value and review", () => {
  it("lists the fills newest first with the sale's realised P/L, and codes open the stock page", async () => {
    const open = vi.fn();
    render(
      <OpenStockContext.Provider value={open}>
        <FillsList summary={report([buy, sell]).summary} />
      </OpenStockContext.Provider>,
    );
    const rows = [...document.querySelectorAll("tr.jr-fill")];
    expect(rows.map((r) => r.getAttribute("data-id"))).toEqual(["2", "1"]);
    expect(rows[0].querySelector(".jr-fill-realised")?.textContent).toBe("-812.72");
    expect(rows[0].querySelector(".jr-fill-realised")?.className).toContain("down");
    expect(rows[1].querySelector(".jr-fill-realised")?.textContent).toBe("");
    expect(rows[1].querySelector(".jr-fill-fees")?.textContent).toBe("5.16 (按费率)");
    expect(rows[1].querySelectorAll("td")[4].textContent).toBe("16.00");
    expect(byId("jr-realised").textContent).toBe("-812.72");
    expect(byId("jr-fees").textContent).toBe("15.82");
    await click(rows[0].querySelector(".stock-link") as HTMLElement);
    expect(open).toHaveBeenCalledWith("000001");
  });

  it("the daily value says the data's date and the holdings without a close", () => {
    const day = (date: string, mv: number, missing: string[] = []): DayValue => ({
      date,
      market_value_fen: mv,
      cost_basis_fen: 1_600_516,
      unrealised_fen: mv - 1_600_516,
      realised_fen: 0,
      missing,
      cash_fen: 50_000,
      repo_fen: 0,
      subscription_fen: 0,
      nav_fen: mv + 50_000,
      flow_fen: 0,
      pnl_fen: 0,
      twr_pct: 0,
      drawdown_pct: 0,
      approximate: [],
    });
    render(<DailyValue held values={[day("2020-06-15", 1_300_000), day("2020-06-16", 1_291_000, ["600519"])]} />);
    expect(byId("jr-value-asof").textContent).toContain("数据截至 2020-06-16");
    expect(byId("jr-value-missing").textContent).toBe("2020-06-16 无收盘价、未计入市值：600519");
    expect(byId("jr-spark").querySelector("polyline")?.getAttribute("points")).toBe("0.0,0.0 320.0,48.0");
    const rows = [...document.querySelectorAll("tr.jr-day")];
    expect(rows.map((r) => r.getAttribute("data-date"))).toEqual(["2020-06-16", "2020-06-15"]);
    cleanup();
    render(<DailyValue held values={[]} />);
    expect(byId("jr-value-none").textContent).toContain("没有缓存的收盘价");
  });

  it("the daily value shows cash, NAV, the return and drawdown, the NAV curve and why prices are approximate", () => {
    charted.data = [];
    const day = (date: string, cash: number, mv: number, approximate: string[] = []): DayValue => ({
      date,
      market_value_fen: mv,
      cost_basis_fen: 1_600_516,
      unrealised_fen: mv - 1_600_516,
      realised_fen: 0,
      missing: [],
      cash_fen: cash,
      repo_fen: 0,
      subscription_fen: 0,
      nav_fen: cash + mv,
      flow_fen: 0,
      pnl_fen: 0,
      twr_pct: 0,
      drawdown_pct: 0,
      approximate,
    });
    const note = "估值为近似值：000001 没有原始（不复权）收盘价";
    render(
      <DailyValue
        held
        values={[day("2020-01-02", 3_399_484, 1_600_000, ["000001"]), day("2020-01-03", 3_399_484, 1_650_000)]}
        performance={{ first: "2020-01-02", last: "2020-01-03", nav_fen: 5_049_484, cash_fen: 3_399_484, twr_pct: 0.98, max_drawdown_pct: -0.01, approximate: [{ code: "000001", reason: "bundled" }], notes: [note], holdings: [] }}
      />,
    );
    expect(byId("jr-cash").textContent).toBe("33,994.84");
    expect(byId("jr-nav-value").textContent).toBe("50,494.84");
    expect(byId("jr-twr").textContent).toBe("+0.98%");
    expect(byId("jr-drawdown").textContent).toBe("-0.01%");
    expect(document.querySelector(".jr-note")?.textContent).toBe(note);
    // the curve: NAV in yuan by day
    expect(charted.data).toEqual([[{ time: "2020-01-02", value: 49_994.84 }, { time: "2020-01-03", value: 50_494.84 }]]);
    const rows = [...document.querySelectorAll("tr.jr-day")];
    expect(rows[1].querySelector(".jr-day-nav")?.getAttribute("data-value")).toBe("4999484");
    expect(rows[1].textContent).toContain("000001（近似价）");
  });
});

describe("record a bank transfer", () => {
  it("sends in or out with the amount in yuan and the date, and says the cash after it", async () => {
    const onRecorded = vi.fn();
    const after = report([]);
    after.summary.cash_fen = 4_500_000;
    mocks.journalRecordCash.mockResolvedValue(ok(after));
    render(<RecordCashForm onRecorded={onRecorded} />);
    await click(byId("jc-out"));
    type("jc-amount", "5,000");
    type("jc-date", "2020-03-02");
    await click(byId("jc-submit"));
    expect(mocks.journalRecordCash).toHaveBeenCalledWith({ into_account: false, amount: 5000, date: "2020-03-02" });
    expect(onRecorded).toHaveBeenCalledWith(after);
    expect(byId("jc-done").textContent).toBe("已记录：转出 5,000.00，现金余额 45,000.00");
    // refused by the backend: said beside the form
    mocks.journalRecordCash.mockResolvedValue(refused("转账日期无效，请用 YYYY-MM-DD"));
    type("jc-amount", "1");
    await click(byId("jc-submit"));
    expect(byId("jc-error").textContent).toContain("转账日期无效");
  });
});

describe("the exit review", () => {

  it("the exit review shows pending horizons as pending, done ones against the sale, and the signal then", async () => {
    const openAt = vi.fn();
    const review = (over: Partial<ExitReview>): ExitReview => ({
      fill_id: 2,
      code: "000001",
      name: "平安银行",
      date: "2020-06-10",
      price: 14,
      shares: 400,
      realised_fen: -81_272,
      held_since: "2020-01-02",
      after: [{ status: "done", days: 5, date: "2020-06-17", close: 14.7, change_pct: 5 }, { status: "pending", days: 10 }, { status: "pending", days: 20 }],
      exit_signal: null,
      signal_unknown: false,
      approximate: null,
      ...over,
    });
    render(
      <OpenStockAtContext.Provider value={openAt}>
        <ExitReviews reviews={[review({}), review({ fill_id: 3, exit_signal: { signal: "stop_loss", reason: "跌破止损" } }), review({ fill_id: 4, signal_unknown: true })]} />
      </OpenStockAtContext.Provider>,
    );
    const first = document.querySelector('tr.jr-review-row[data-id="2"]') as HTMLElement;
    const cells = [...first.querySelectorAll(".jr-after")];
    expect(cells.map((c) => c.getAttribute("data-status"))).toEqual(["done", "pending", "pending"]);
    expect(cells[0].textContent).toBe("14.70 (+5.00%)");
    expect(cells[1].textContent).toBe("待定");
    expect(first.querySelector(".jr-signal")?.textContent).toBe("无离场信号");
    expect(document.querySelector('tr[data-id="3"] .jr-signal')?.textContent).toBe("止损: 跌破止损");
    expect(document.querySelector('tr[data-id="4"] .jr-signal')?.textContent).toBe("无缓存K线，无法判断");
    await click(first.querySelector(".jr-sale-at") as HTMLElement);
    expect(openAt).toHaveBeenCalledWith("000001", 20200610);
  });
});

describe("on the portfolio page", () => {
  const position = (over: Partial<PositionRow>): PositionRow => ({
    code: "000001",
    name: "平安银行",
    shares: 1000,
    cost: 16.00516,
    buy_dt: "2020-01-02",
    stop_loss: null,
    target_price: null,
    last: 12.91,
    last_date: "2020-06-16",
    data_status: "stale",
    market_value: 12910,
    pnl_amount: -3095.16,
    pnl_pct: -19.34,
    weight_pct: 100,
    health: null,
    health_reasons: [],
    verdict: null,
    error: null,
    ...over,
  });
  const page = (positions: PositionRow[]): PortfolioPage => ({ positions, free_cash: 0, cash_from_ledger: false, total_market_value: null, total_assets: null, data_status: "stale", as_of: null, without_quotes: 0 });

  it("a recorded fill reloads the positions table, which shows the derived shares and average cost", async () => {
    mocks.portfolioPage.mockResolvedValueOnce(ok(page([])));
    render(<Portfolio onOpen={() => {}} />);
    await screen.findByText("还没有持仓。用下面的表单添加一笔。");
    await waitFor(() => expect(document.getElementById("jr-no-fills")).toBeTruthy());
    mocks.portfolioPage.mockResolvedValue(ok(page([position({})])));
    mocks.journalRecordFill.mockResolvedValue(ok(report([buy])));
    mocks.journalReport.mockResolvedValue(ok(report([buy])));
    type("jf-code", "000001");
    type("jf-date", "2020-01-02");
    type("jf-price", "16");
    type("jf-shares", "1000");
    await click(byId("jf-submit"));
    await waitFor(() => expect(document.querySelector('.pf-row[data-code="000001"]')).toBeTruthy());
    const row = document.querySelector('.pf-row[data-code="000001"]') as HTMLElement;
    expect(row.querySelector(".pf-shares")?.textContent).toBe("1,000");
    expect(row.querySelector(".pf-cost")?.textContent).toBe("16.005");
    expect(document.querySelectorAll("tr.jr-fill")).toHaveLength(1);
  });
});

describe("the ledger's other entries and the reconciliation", () => {
  const entry = (id: number, date: string, kind: EntryRow["kind"], cash_fen: number, over: Partial<EntryRow> = {}): EntryRow => ({
    id,
    date,
    time: null,
    name: "",
    kind,
    instrument: null,
    source: "import",
    cash_fen,
    realised_fen: null,
    ...over,
  });

  it("lists what an import booked besides the trades, with the cash each moved", () => {
    const fees = { commission_fen: 500, stamp_fen: 0, transfer_fen: 13 };
    render(
      <AccountActivity
        entries={[
          entry(1, "2020-06-01", { type: "cash_in", amount_fen: 5_000_000 }, 5_000_000, { time: "09:20:11" }),
          entry(2, "2020-06-02", { type: "buy", code: "000001", shares: 1000, price_e6: 13_000_000, amount_fen: 1_300_000, fees }, -1_300_513),
          entry(3, "2020-06-10", { type: "dividend", code: "000001", amount_fen: 14_380 }, 14_380, { name: "平安银行" }),
          entry(4, "2020-06-10", { type: "bonus_shares", code: "000001", shares: 300 }, 0, { name: "平安银行" }),
          entry(5, "2020-06-11", { type: "repo_return", code: "204001", principal_fen: 10_000_000, interest_fen: 5_479 }, 10_005_479),
          entry(6, "2020-06-12", { type: "note", text: "指定交易" }, 0, { source: "manual" }),
        ]}
      />,
    );
    const rows = [...document.querySelectorAll("tr.jr-activity-row")];
    expect(rows.map((r) => r.getAttribute("data-kind"))).toEqual(["note", "repo_return", "bonus_shares", "dividend", "cash_in"]);
    const cell = (r: Element, css: string) => r.querySelector(css)?.textContent;
    expect(cell(rows[4], ".jr-activity-kind")).toBe("银证转入");
    expect(cell(rows[4], ".jr-activity-cash")).toBe("+50,000.00");
    expect(rows[4].querySelector("td")?.textContent).toBe("2020-06-01 09:20:11");
    expect(cell(rows[3], ".jr-activity-cash")).toBe("+143.80");
    expect(rows[3].getAttribute("data-code")).toBe("000001");
    expect(cell(rows[2], ".jr-activity-shares")).toBe("+300");
    expect(cell(rows[2], ".jr-activity-cash")).toBe("");
    expect(cell(rows[1], ".jr-activity-detail")).toBe("本金 100,000.00 + 利息 54.79");
    expect(cell(rows[0], ".jr-activity-detail")).toBe("指定交易");
    expect(rows[0].textContent).toContain("持仓页");
    cleanup();
    render(<AccountActivity entries={[entry(2, "2020-06-02", { type: "buy", code: "000001", shares: 1000, price_e6: 13_000_000, amount_fen: 1_300_000, fees }, -1_300_513)]} />);
    expect(byId("jr-no-activity").textContent).toBe("还没有买卖以外的记录。");
  });

  it("says when no statement balances are on record, rather than that all agree", () => {
    render(<ReconciliationView rec={noRecord} error={null} />);
    expect(byId("jr-rec-none").textContent).toContain("没有对账单余额记录");
    expect(document.getElementById("jr-rec-summary")).toBeNull();
    expect(document.getElementById("jr-rec-closing")).toBeNull();
  });

  it("a ledger that agrees: the count and the last stated balances beside the ledger's", () => {
    const cash: Difference = { kind: "cash", code: null, date: "2020-06-02", line: 3, statement: 3_699_487, derived: 3_699_487 };
    const held: Difference = { kind: "shares", code: "000001", date: "2020-06-02", line: 3, statement: 1000, derived: 1000 };
    render(<ReconciliationView rec={{ has_cash_balance: true, has_shares_balance: true, checked: 3, closing: [cash, held], differences: [] }} error={null} />);
    expect(byId("jr-rec-summary").textContent).toBe("3 个余额与账本一致。");
    expect(byId("jr-rec-summary").getAttribute("data-differences")).toBe("0");
    expect(document.getElementById("jr-rec-diffs")).toBeNull();
    const rows = [...document.querySelectorAll("tr.jr-rec-close")];
    expect(rows.map((r) => r.querySelector(".jr-rec-item")?.textContent)).toEqual(["资金", "000001"]);
    expect(rows[0].querySelector(".jr-rec-statement")?.textContent).toBe("36,994.87");
    expect(rows[1].querySelector(".jr-rec-ledger")?.textContent).toBe("1,000");
    expect(rows.map((r) => r.getAttribute("data-agrees"))).toEqual(["true", "true"]);
  });

  it("names every difference by day, code and statement line", () => {
    const diff: Difference = { kind: "shares", code: "000001", date: "2020-06-03", line: 2, statement: 1600, derived: 1500 };
    const cash: Difference = { kind: "cash", code: null, date: "2020-06-03", line: 2, statement: 3_045_987, derived: 3_045_987 };
    render(<ReconciliationView rec={{ has_cash_balance: true, has_shares_balance: true, checked: 5, closing: [cash, diff], differences: [diff] }} error={null} />);
    expect(byId("jr-rec-summary").textContent).toBe("5 个余额中 1 个与账本不一致。");
    const rows = [...document.querySelectorAll("tr.jr-rec-diff")];
    expect(rows).toHaveLength(1);
    expect(rows[0].getAttribute("data-code")).toBe("000001");
    expect(rows[0].getAttribute("data-date")).toBe("2020-06-03");
    expect(rows[0].getAttribute("data-line")).toBe("2");
    expect([...rows[0].querySelectorAll("td")].map((c) => c.textContent)).toEqual(["2020-06-03", "000001", "2", "1,600", "1,500", "+100", "不一致"]);
  });

  it("asks for the reconciliation again after an import, and after a recorded transfer", async () => {
    const held: Difference = { kind: "shares", code: "000001", date: "2020-06-02", line: 3, statement: 1000, derived: 1000 };
    render(<Journal onChanged={() => {}} />);
    await waitFor(() => expect(document.getElementById("jr-rec-none")).toBeTruthy());
    expect(mocks.journalReconciliation).toHaveBeenCalledTimes(1);
    mocks.journalReconciliation.mockResolvedValue(ok({ has_cash_balance: false, has_shares_balance: true, checked: 1, closing: [held], differences: [] }));
    mocks.journalImport.mockResolvedValue(ok({ imported: 2, duplicates: 0, skipped: [], realised_fen: 0, message: "", by_kind: [], ignored: [], encoding: "utf8", fees_computed: 0, reconciliation: noRecord }));
    const file = new File([new TextEncoder().encode("x")], "s.csv", { type: "text/csv" });
    await act(async () => {
      fireEvent.change(byId("ji-file"), { target: { files: [file] } });
    });
    await waitFor(() => expect(document.getElementById("jr-rec-summary")).toBeTruthy());
    expect(byId("jr-rec-summary").textContent).toBe("1 个余额与账本一致。");
    expect(mocks.journalReconciliation).toHaveBeenCalledTimes(2);

    mocks.journalRecordCash.mockResolvedValue(ok(report([])));
    type("jc-amount", "100");
    await click(byId("jc-submit"));
    await waitFor(() => expect(mocks.journalReconciliation).toHaveBeenCalledTimes(3));
  });

  it("a reconciliation that cannot be read says so", async () => {
    mocks.journalReconciliation.mockResolvedValue({ status: "error", error: { kind: "internal", message: "database is locked" } });
    render(<Journal onChanged={() => {}} />);
    await waitFor(() => expect(document.getElementById("jr-rec-error")).toBeTruthy());
    expect(byId("jr-rec-error").textContent).toBe("读取对账结果失败：database is locked");
  });
});
