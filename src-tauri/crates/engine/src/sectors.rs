//! Sector strength and rotation per industry, per trading day, from the bars alone.
//!
//! For each industry (the stocks' [`StockSeries::industry`]) and each day in a range:
//! - the 5-day and 20-day return, **equal-weighted**: the mean of its members' own returns
//!   over their last 5 (20) bars ending that day, so one giant does not stand for the
//!   industry; the same mean over every stock of the market is the market's, and the
//!   relative figures are the industry's minus the market's, in percentage points;
//! - breadth: the share of its members (with 20 bars) closing above their MA20;
//! - amount share: its members' traded value that day over the whole market's (this is
//!   where size weighs in);
//! - limit-up count: its members on the day's limit-up ladder, when the caller gives the
//!   limit statistics ([`crate::limits`]);
//! - rotation, as a relative-rotation graph reads it: each industry's equal-weight index
//!   (chained daily mean returns of its members) over the market's is its relative strength
//!   RS. `rs_ratio` = 100 + the z-score of RS within its last 20 days; `rs_momentum` = 100 +
//!   the z-score of the 5-day change of `rs_ratio` within its last 20 days. Both above 100:
//!   leading; ratio below, momentum above: improving; ratio above, momentum below:
//!   weakening; both below: lagging. (Our normalisation: the reference's RRG is
//!   proprietary; a z-score keeps every industry on one scale.) The ratio needs 20 days of
//!   history before the day, the momentum 44; earlier days have none.
//! - the day's leaders: its members with the largest return that day (close over the
//!   previous close), under the name each carried that day.
//!
//! A stock counts on a day only when it has a bar on that day (a suspended stock is left
//! out); its returns are over its own bars. No look-ahead: a day reads bars dated on or
//! before it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::limits::{LimitSeries, partition_from_end};
use crate::{Bar, StockSeries};

/// Windows and sizes; `Default` is the documented choice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SectorConfig {
    /// The short return window, bars (the reference's filter with a positive IC: 5).
    pub short_bars: usize,
    pub long_bars: usize,
    /// Breadth: above the MA of this many closes.
    pub ma_bars: usize,
    /// The z-score window of the rotation figures, days.
    pub rrg_window: usize,
    /// The momentum is the change of the ratio over this many days.
    pub momentum_lag: usize,
    /// Leaders listed per industry.
    pub leaders: usize,
}

impl Default for SectorConfig {
    fn default() -> Self {
        SectorConfig {
            short_bars: 5,
            long_bars: 20,
            ma_bars: 20,
            rrg_window: 20,
            momentum_lag: 5,
            leaders: 3,
        }
    }
}

impl SectorConfig {
    /// Trading days before the first day of a range that the rotation reads.
    pub fn warmup_days(&self) -> usize {
        2 * self.rrg_window + self.momentum_lag
    }
}

/// Where an industry stands in the rotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Rotation {
    /// Stronger than the market and gaining.
    Leading,
    /// Weaker than the market but gaining.
    Improving,
    /// Stronger than the market but losing ground.
    Weakening,
    /// Weaker than the market and losing ground.
    Lagging,
}

/// The quadrant of a (ratio, momentum) pair around 100; 100 itself counts as above.
pub fn rotation(rs_ratio: f64, rs_momentum: f64) -> Rotation {
    match (rs_ratio >= 100.0, rs_momentum >= 100.0) {
        (true, true) => Rotation::Leading,
        (false, true) => Rotation::Improving,
        (true, false) => Rotation::Weakening,
        (false, false) => Rotation::Lagging,
    }
}

/// A member that moved most on the day.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct SectorLeader {
    pub code: String,
    /// The name it carried that day (today's when no recorded name covers the day).
    pub name: String,
    /// Close over the previous close, percent.
    pub change_pct: f64,
}

/// One industry on one day.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct SectorRow {
    pub industry: String,
    /// Members with a bar that day.
    pub members: u32,
    /// Equal-weight mean of the members' short / long returns, percent.
    pub return_short_pct: Option<f64>,
    pub return_long_pct: Option<f64>,
    /// The same minus the market's, percentage points.
    pub relative_short_pct: Option<f64>,
    pub relative_long_pct: Option<f64>,
    /// Share of the members with a full MA window closing above it, percent.
    pub breadth_pct: Option<f64>,
    /// Members' traded value that day, CNY.
    pub amount: f64,
    /// Of the whole market's that day, percent.
    pub amount_share_pct: Option<f64>,
    /// Members that closed limit-up; `None` without limit statistics for the day.
    pub limit_up: Option<u32>,
    pub rs_ratio: Option<f64>,
    pub rs_momentum: Option<f64>,
    pub rotation: Option<Rotation>,
    pub leaders: Vec<SectorLeader>,
}

/// Every industry on one day, strongest short relative return first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct SectorDay {
    pub date: u32,
    /// Stocks with a bar that day.
    pub stocks: u32,
    /// Of them, those with an industry.
    pub with_industry: u32,
    pub market_return_short_pct: Option<f64>,
    pub market_return_long_pct: Option<f64>,
    pub rows: Vec<SectorRow>,
}

/// The days of a range, ascending.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct SectorSeries {
    pub days: Vec<SectorDay>,
}

/// A running mean.
#[derive(Debug, Clone, Copy, Default)]
struct Mean {
    sum: f64,
    n: u32,
}

impl Mean {
    fn add(&mut self, v: Option<f64>) {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            self.sum += v;
            self.n += 1;
        }
    }

    fn get(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / f64::from(self.n))
    }
}

/// One industry's figures on one day, as they add up.
#[derive(Debug, Clone, Default)]
struct Acc {
    members: u32,
    short: Mean,
    long: Mean,
    above: u32,
    with_ma: u32,
    amount: f64,
    limit_up: u32,
    /// (change percent, index of the stock)
    movers: Vec<(f64, usize)>,
}

fn pct(later: f64, earlier: f64) -> Option<f64> {
    (earlier > 0.0 && later.is_finite()).then(|| (later / earlier - 1.0) * 100.0)
}

/// A bar's traded value, CNY: its amount, or close × volume when the source gave none.
pub fn amount_of(b: &Bar) -> f64 {
    if b.amount > 0.0 {
        b.amount
    } else {
        b.close * b.volume
    }
}

/// The z-score of the last of `values` within them; `None` with fewer than two, 0 when
/// they are all alike.
fn z_last(values: &[f64]) -> Option<f64> {
    let last = *values.last()?;
    if values.len() < 2 {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    let sd = var.sqrt();
    Some(if sd < 1e-12 { 0.0 } else { (last - mean) / sd })
}

/// RS-ratio and RS-momentum of each day of `rs` (an industry's relative strength per
/// calendar day; `None` before it has members).
fn rrg(rs: &[Option<f64>], cfg: &SectorConfig) -> Vec<(Option<f64>, Option<f64>)> {
    let w = cfg.rrg_window.max(2);
    let ratio: Vec<Option<f64>> = (0..rs.len())
        .map(|t| {
            let window = rs.get((t + 1).checked_sub(w)?..=t)?;
            let values: Option<Vec<f64>> = window.iter().copied().collect();
            z_last(&values?).map(|z| 100.0 + z)
        })
        .collect();
    let delta: Vec<Option<f64>> = (0..rs.len())
        .map(|t| Some(ratio[t]? - ratio[t.checked_sub(cfg.momentum_lag)?]?))
        .collect();
    (0..rs.len())
        .map(|t| {
            let momentum = (|| {
                let window = delta.get((t + 1).checked_sub(w)?..=t)?;
                let values: Option<Vec<f64>> = window.iter().copied().collect();
                z_last(&values?).map(|z| 100.0 + z)
            })();
            (ratio[t], momentum)
        })
        .collect()
}

/// The sector table of every trading day (a date any stock has a bar) in `from..=to`.
/// `limits`, when given, supplies each day's limit-up stocks.
pub fn sector_series(
    stocks: &[StockSeries],
    from: u32,
    to: u32,
    limits: Option<&LimitSeries>,
    cfg: &SectorConfig,
) -> SectorSeries {
    // the market's calendar up to `to`, from the rotation's warm-up before `from`: each
    // stock's bars in the range and its last `warmup` before it hold every one of the
    // market's last `warmup` days before it (a stock trading on such a day has fewer than
    // `warmup` bars between it and `from`), and only older days besides
    let warmup = cfg.warmup_days();
    let mut calendar: Vec<u32> = Vec::new();
    let mut last: &[Bar] = &[];
    for s in stocks {
        let end = partition_from_end(&s.bars, |b| b.date <= to);
        let begin = partition_from_end(&s.bars, |b| b.date < from).saturating_sub(warmup);
        let days = &s.bars[begin.min(end)..end];
        // most stocks trade on the same days as the one before: those add no day
        if days.len() == last.len() && days.iter().zip(last).all(|(a, b)| a.date == b.date) {
            continue;
        }
        calendar.extend(days.iter().map(|b| b.date));
        last = days;
    }
    calendar.sort_unstable();
    calendar.dedup();
    let first_day = calendar.partition_point(|d| *d < from);
    let start = first_day.saturating_sub(warmup);
    let calendar = &calendar[start..];
    let first_day = first_day - start;
    let days = calendar.len();
    let shown = days - first_day;
    if shown == 0 {
        return SectorSeries::default();
    }
    let index_of = |date: u32| calendar.binary_search(&date).ok();

    let mut names: BTreeMap<&str, usize> = BTreeMap::new();
    for s in stocks {
        if let Some(ind) = s.industry.as_deref() {
            let next = names.len();
            names.entry(ind).or_insert(next);
        }
    }
    let industries = names.len();
    // daily mean returns per industry and of the market, over the whole calendar
    let mut daily = vec![Mean::default(); days * industries];
    let mut market_daily = vec![Mean::default(); days];
    let mut acc = vec![Acc::default(); shown * industries];
    let mut market_short = vec![Mean::default(); shown];
    let mut market_long = vec![Mean::default(); shown];
    let mut market_amount = vec![0.0f64; shown];
    let mut market_stocks = vec![0u32; shown];
    let mut with_industry = vec![0u32; shown];
    let limit_up: Option<Vec<std::collections::HashSet<&str>>> = limits.map(|l| {
        let mut by_day = vec![std::collections::HashSet::new(); shown];
        for d in &l.days {
            if let Some(t) = index_of(d.date).and_then(|t| t.checked_sub(first_day)) {
                by_day[t] = d.ladder.iter().map(|s| s.code.as_str()).collect();
            }
        }
        by_day
    });
    let has_limits: Vec<bool> = (0..shown)
        .map(|t| {
            limits.is_some_and(|l| {
                l.days
                    .binary_search_by_key(&calendar[first_day + t], |d| d.date)
                    .is_ok()
            })
        })
        .collect();

    for (k, s) in stocks.iter().enumerate() {
        let ind = s.industry.as_deref().and_then(|i| names.get(i)).copied();
        let end = partition_from_end(&s.bars, |b| b.date <= to);
        let begin = partition_from_end(&s.bars, |b| b.date < calendar[0]).max(1);
        for i in begin..end {
            let bar = &s.bars[i];
            let Some(t) = index_of(bar.date) else {
                continue;
            };
            let change = pct(bar.close, s.bars[i - 1].close);
            market_daily[t].add(change.map(|c| c / 100.0));
            if let Some(ind) = ind {
                daily[t * industries + ind].add(change.map(|c| c / 100.0));
            }
            let Some(day) = t.checked_sub(first_day) else {
                continue;
            };
            let short = i
                .checked_sub(cfg.short_bars)
                .and_then(|j| pct(bar.close, s.bars[j].close));
            let long = i
                .checked_sub(cfg.long_bars)
                .and_then(|j| pct(bar.close, s.bars[j].close));
            let amount = amount_of(bar);
            market_short[day].add(short);
            market_long[day].add(long);
            market_amount[day] += amount;
            market_stocks[day] += 1;
            let Some(ind) = ind else {
                continue;
            };
            with_industry[day] += 1;
            let a = &mut acc[day * industries + ind];
            a.members += 1;
            a.short.add(short);
            a.long.add(long);
            a.amount += amount;
            if let Some(ma) = crate::indicators::ma(&s.bars[..=i], cfg.ma_bars) {
                a.with_ma += 1;
                a.above += u32::from(bar.close > ma);
            }
            if let Some(ups) = &limit_up {
                a.limit_up += u32::from(ups[day].contains(s.code.as_str()));
            }
            if let Some(c) = change {
                a.movers.push((c, k));
            }
        }
    }

    // each industry's index over the market's, and its rotation figures
    let mut market_index = 1.0;
    let market_path: Vec<f64> = market_daily
        .iter()
        .map(|m| {
            market_index *= 1.0 + m.get().unwrap_or(0.0);
            market_index
        })
        .collect();
    let rotations: Vec<Vec<(Option<f64>, Option<f64>)>> = (0..industries)
        .map(|ind| {
            let mut index = 1.0;
            let mut started = false;
            let rs: Vec<Option<f64>> = (0..days)
                .map(|t| {
                    let m = daily[t * industries + ind];
                    started |= m.n > 0;
                    index *= 1.0 + m.get().unwrap_or(0.0);
                    (started && market_path[t] > 0.0).then(|| index / market_path[t])
                })
                .collect();
            rrg(&rs, cfg)
        })
        .collect();

    let out = (0..shown)
        .map(|day| {
            let ms = market_short[day].get();
            let ml = market_long[day].get();
            let total = market_amount[day];
            let mut rows: Vec<SectorRow> = names
                .iter()
                .filter_map(|(name, &ind)| {
                    let a = &acc[day * industries + ind];
                    if a.members == 0 {
                        return None;
                    }
                    let mut movers = a.movers.clone();
                    movers.sort_by(|x, y| {
                        y.0.total_cmp(&x.0)
                            .then_with(|| stocks[x.1].code.cmp(&stocks[y.1].code))
                    });
                    let date = calendar[first_day + day];
                    let leaders = movers
                        .iter()
                        .take(cfg.leaders)
                        .map(|&(c, k)| SectorLeader {
                            code: stocks[k].code.clone(),
                            name: stocks[k].name_on(date).value.to_string(),
                            change_pct: c,
                        })
                        .collect();
                    let (rs_ratio, rs_momentum) = rotations[ind][first_day + day];
                    let short = a.short.get();
                    let long = a.long.get();
                    Some(SectorRow {
                        industry: (*name).to_string(),
                        members: a.members,
                        return_short_pct: short,
                        return_long_pct: long,
                        relative_short_pct: short.zip(ms).map(|(s, m)| s - m),
                        relative_long_pct: long.zip(ml).map(|(l, m)| l - m),
                        breadth_pct: (a.with_ma > 0)
                            .then(|| f64::from(a.above) / f64::from(a.with_ma) * 100.0),
                        amount: a.amount,
                        amount_share_pct: (total > 0.0).then(|| a.amount / total * 100.0),
                        limit_up: has_limits[day].then_some(a.limit_up),
                        rs_ratio,
                        rs_momentum,
                        rotation: rs_ratio.zip(rs_momentum).map(|(r, m)| rotation(r, m)),
                        leaders,
                    })
                })
                .collect();
            rows.sort_by(|a, b| {
                let key = |r: &SectorRow| r.relative_short_pct.unwrap_or(f64::NEG_INFINITY);
                key(b)
                    .total_cmp(&key(a))
                    .then_with(|| a.industry.cmp(&b.industry))
            });
            SectorDay {
                date: calendar[first_day + day],
                stocks: market_stocks[day],
                with_industry: with_industry[day],
                market_return_short_pct: ms,
                market_return_long_pct: ml,
                rows,
            }
        })
        .collect();
    SectorSeries { days: out }
}

/// The sector table of one day (`None` when no stock has a bar that day).
pub fn sector_day(
    stocks: &[StockSeries],
    day: u32,
    limits: Option<&LimitSeries>,
    cfg: &SectorConfig,
) -> Option<SectorDay> {
    sector_series(stocks, day, day, limits, cfg)
        .days
        .into_iter()
        .find(|d| d.date == day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Board;
    use crate::limits::{LadderStock, LimitDay};

    fn bar(date: u32, close: f64, amount: f64) -> Bar {
        Bar {
            date,
            open: close,
            high: close,
            low: close,
            close,
            volume: 100.0,
            amount,
            turnover: None,
        }
    }

    fn stock(code: &str, industry: Option<&str>, closes: &[f64], amount: f64) -> StockSeries {
        StockSeries {
            code: code.into(),
            name: format!("S{code}"),
            board: Board::Main,
            industry: industry.map(str::to_string),
            market_cap_yi: None,
            list_date: None,
            bars: closes
                .iter()
                .enumerate()
                .map(|(i, c)| bar(20240101 + i as u32, *c, amount))
                .collect(),
            name_history: Vec::new(),
            delist_date: None,
            cap_history: Vec::new(),
        }
    }

    #[test]
    fn the_quadrants_around_100() {
        let cases = [
            (101.0, 101.0, Rotation::Leading),
            (100.0, 100.0, Rotation::Leading),
            (99.0, 101.0, Rotation::Improving),
            (101.0, 99.0, Rotation::Weakening),
            (99.0, 99.0, Rotation::Lagging),
        ];
        for (r, m, want) in cases {
            assert_eq!(rotation(r, m), want, "{r} {m}");
        }
    }

    #[test]
    fn z_scores_by_hand() {
        assert_eq!(z_last(&[1.0]), None);
        assert_eq!(z_last(&[2.0, 2.0, 2.0]), Some(0.0));
        // mean 2, population sd sqrt(2/3)
        let z = z_last(&[1.0, 2.0, 3.0]).unwrap();
        assert!((z - 1.0 / (2.0f64 / 3.0).sqrt()).abs() < 1e-12, "{z}");
    }

    /// Six days; industry A: two stocks, B: one, one stock without an industry.
    fn market() -> Vec<StockSeries> {
        vec![
            stock(
                "000001",
                Some("A"),
                &[10.0, 10.0, 10.0, 10.0, 10.0, 11.0],
                100.0,
            ),
            stock(
                "000002",
                Some("A"),
                &[10.0, 10.0, 10.0, 10.0, 10.0, 13.0],
                300.0,
            ),
            stock(
                "000003",
                Some("B"),
                &[10.0, 10.0, 10.0, 10.0, 10.0, 9.0],
                400.0,
            ),
            stock("000004", None, &[10.0, 10.0, 10.0, 10.0, 10.0, 10.0], 200.0),
        ]
    }

    #[test]
    fn a_day_by_hand() {
        let cfg = SectorConfig {
            short_bars: 5,
            long_bars: 20,
            ma_bars: 3,
            ..SectorConfig::default()
        };
        let limits = LimitSeries {
            days: vec![LimitDay {
                date: 20240106,
                ladder: vec![LadderStock {
                    code: "000002".into(),
                    name: "S000002".into(),
                    name_known: false,
                    boards: 1,
                    one_price: false,
                }],
                ..LimitDay::default()
            }],
        };
        let d = sector_day(&market(), 20240106, Some(&limits), &cfg).unwrap();
        assert_eq!((d.stocks, d.with_industry), (4, 3));
        // market 5-day: (10 + 30 − 10 + 0) / 4 = 7.5 %
        let m = d.market_return_short_pct.unwrap();
        assert!((m - 7.5).abs() < 1e-9, "{m}");
        assert_eq!(d.market_return_long_pct, None);
        let names: Vec<&str> = d.rows.iter().map(|r| r.industry.as_str()).collect();
        assert_eq!(names, ["A", "B"]);
        let a = &d.rows[0];
        assert_eq!(a.members, 2);
        // A: (10 + 30) / 2 = 20 %, 12.5 points over the market
        assert!((a.return_short_pct.unwrap() - 20.0).abs() < 1e-9);
        assert!((a.relative_short_pct.unwrap() - 12.5).abs() < 1e-9);
        // both above their MA3 (10, 10, 11 → 10.33; 10, 10, 13 → 11)
        assert_eq!(a.breadth_pct, Some(100.0));
        // 400 of the market's 1 000
        assert!((a.amount_share_pct.unwrap() - 40.0).abs() < 1e-9);
        assert_eq!(a.limit_up, Some(1));
        let leaders: Vec<&str> = a.leaders.iter().map(|l| l.code.as_str()).collect();
        assert_eq!(leaders, ["000002", "000001"]);
        assert!((a.leaders[0].change_pct - 30.0).abs() < 1e-9);
        let b = &d.rows[1];
        assert!((b.relative_short_pct.unwrap() + 17.5).abs() < 1e-9);
        assert_eq!(b.breadth_pct, Some(0.0));
        assert_eq!(b.limit_up, Some(0));
        // six days are too few for the rotation
        assert_eq!((a.rs_ratio, a.rotation), (None, None));
        // without limit statistics the column is unknown, not zero
        let d = sector_day(&market(), 20240106, None, &cfg).unwrap();
        assert_eq!(d.rows[0].limit_up, None);
    }

    #[test]
    fn a_suspended_member_is_left_out_of_the_day() {
        let mut m = market();
        m[1].bars.pop();
        let d = sector_day(&m, 20240106, None, &SectorConfig::default()).unwrap();
        assert_eq!(d.rows[0].members, 1);
        assert!((d.rows[0].return_short_pct.unwrap() - 10.0).abs() < 1e-9);
    }

    /// Two industries over 80 days: X outperforms steadily then turns down for the last
    /// eight days; Y is the mirror image.
    #[test]
    fn rotation_follows_relative_strength_and_its_turn() {
        let n = 80;
        let mut x = vec![10.0];
        let mut y = vec![10.0];
        for i in 1..n {
            let (rx, ry) = if i < n - 8 {
                (0.01, -0.01)
            } else {
                (-0.02, 0.02)
            };
            x.push(x[i - 1] * (1.0 + rx));
            y.push(y[i - 1] * (1.0 + ry));
        }
        // a wobble so the windows are not perfectly linear
        for i in (0..n).step_by(7) {
            x[i] *= 1.001;
            y[i] *= 0.999;
        }
        let stocks = vec![
            stock("000001", Some("X"), &x, 1.0),
            stock("000002", Some("Y"), &y, 1.0),
        ];
        let cfg = SectorConfig::default();
        let last = stocks[0].bars[n - 1].date;
        let before_turn = stocks[0].bars[n - 9].date;
        let series = sector_series(&stocks, before_turn, last, None, &cfg);
        assert_eq!(series.days.len(), 9);
        let row = |d: &SectorDay, name: &str| {
            d.rows.iter().find(|r| r.industry == name).cloned().unwrap()
        };
        let first = &series.days[0];
        assert!(row(first, "X").rs_ratio.unwrap() > 100.0);
        assert!(row(first, "Y").rs_ratio.unwrap() < 100.0);
        let end = series.days.last().unwrap();
        // eight days of the turn: X's strength falls (momentum below 100) and Y's rises
        assert!(
            row(end, "X").rs_momentum.unwrap() < 100.0,
            "{:?}",
            row(end, "X")
        );
        assert!(
            row(end, "Y").rs_momentum.unwrap() > 100.0,
            "{:?}",
            row(end, "Y")
        );
        assert!(matches!(
            row(end, "X").rotation,
            Some(Rotation::Weakening | Rotation::Lagging)
        ));
        assert!(matches!(
            row(end, "Y").rotation,
            Some(Rotation::Improving | Rotation::Leading)
        ));
        // the earliest days of the data have no rotation figures
        let early = sector_day(&stocks, stocks[0].bars[10].date, None, &cfg).unwrap();
        assert_eq!(row(&early, "X").rs_ratio, None);
        assert_eq!(row(&early, "X").rs_momentum, None);
        // each day of the series is that day computed alone (the index chain starts at
        // another day, which scales RS and leaves its z-scores as they are, to rounding)
        let alone = sector_day(&stocks, end.date, None, &cfg).unwrap();
        for (a, b) in alone.rows.iter().zip(&end.rows) {
            assert_eq!((&a.industry, a.rotation), (&b.industry, b.rotation));
            assert!((a.rs_ratio.unwrap() - b.rs_ratio.unwrap()).abs() < 1e-9);
            assert!((a.rs_momentum.unwrap() - b.rs_momentum.unwrap()).abs() < 1e-9);
            assert_eq!(a.relative_short_pct, b.relative_short_pct);
        }
    }
}
