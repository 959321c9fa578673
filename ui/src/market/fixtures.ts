// Typed samples of the desk's market map answers for the page tests.
import type { IndustryMembers, LimitDay, MarketMap, MarketMapSeries, SectorRow } from "../bindings";

export const limitDay = (over: Partial<LimitDay> = {}): LimitDay => ({
  date: 20200616,
  stocks: 8,
  limit_up: 3,
  limit_down: 1,
  failed: 2,
  one_price_up: 1,
  one_price_down: 0,
  seal_rate: 0.6,
  premium_pct: 1.234,
  premium_stocks: 2,
  highest_board: 2,
  ladder: [
    { code: "000001", name: "平安银行", name_known: true, boards: 2, one_price: false },
    { code: "000338", name: "潍柴动力", name_known: true, boards: 1, one_price: true },
    { code: "601318", name: "中国平安", name_known: false, boards: 1, one_price: false },
  ],
  unlimited: 0,
  previous_scale_days: 0,
  adjusted_days: 0,
  st_from_today: 8,
  ...over,
});

export const row = (industry: string, amount: number, rel: number | null): SectorRow => ({
  industry,
  members: 3,
  return_short_pct: rel,
  return_long_pct: null,
  relative_short_pct: rel,
  relative_long_pct: null,
  breadth_pct: 50,
  amount,
  amount_share_pct: null,
  limit_up: 0,
  rs_ratio: 101,
  rs_momentum: 99,
  rotation: "weakening",
  leaders: [],
});

export const mapWith = (rows: SectorRow[] | null): MarketMap => ({
  trade_date: "2020-06-16",
  asked: null,
  limits: limitDay(),
  sectors: rows && { date: 20200616, stocks: 8, with_industry: 8, market_return_short_pct: 0, market_return_long_pct: 0, rows },
  notes: rows ? [{ type: "names_from_today", stocks: 8 }] : [{ type: "no_industries" }],
});

export const series: MarketMapSeries = {
  trade_date: "2020-06-16",
  asked: null,
  limits: [limitDay({ date: 20200615, limit_up: 1, ladder: [] }), limitDay()],
  trails: [
    {
      industry: "金融",
      rotation: "leading",
      points: [
        { date: "2020-06-15", rs_ratio: 100.5, rs_momentum: 100.2 },
        { date: "2020-06-16", rs_ratio: 101.2, rs_momentum: 100.9 },
      ],
    },
    { industry: "消费", rotation: null, points: [] },
  ],
  notes: [],
};

export const members: IndustryMembers = {
  trade_date: "2020-06-16",
  industry: "金融",
  members: [
    { code: "601318", name: "中国平安", change_pct: 1.3, return_short_pct: 4.2, amount: 5e9, limit_up: true, boards: 1 },
    { code: "000001", name: "平安银行", change_pct: 0.5, return_short_pct: -1, amount: 2e9, limit_up: false, boards: null },
  ],
};
