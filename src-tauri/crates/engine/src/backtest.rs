//! The backtest (REFERENCE §14.11): on each trading day of [start, end] the
//! signals are decided from the bars known at that close (the funnel, or any
//! [`SignalSource`]), the top picks are bought — at the next day's open, or at the signal
//! day's close — held for `hold_days` trading days with a stop-loss and an optional
//! take-profit, under A-share rules:
//!
//! * T+1: a share bought today can be sold from the next trading day;
//! * the board's lots ([`Board::lot_rule`]: 100-share lots on the main board and ChiNext,
//!   at least 200 then any share on STAR, at least 100 then any share on BSE); a pick whose
//!   smallest buy costs more than its slot is skipped;
//! * no buy when the entry price is at the limit-up, no sell on a limit-down close (the
//!   position is held, and the trade counts the days it was stuck); limits 10 % main
//!   board, 20 % STAR and ChiNext (10 % for ChiNext before 2020-08-24), 5 % ST, 30 % BSE,
//!   from the previous close rounded to the fen;
//! * a day without a bar (suspension) trades nothing in that stock;
//! * point in time: every price limit reads the stock's ST status on that day (its name
//!   history; today's name where none covers the day, counted in [`AsOfNotes`]);
//! * delisting: a stock is not bought on or after its last trading day
//!   ([`StockSeries::last_trading_day`]); a position still held then is closed at that
//!   day's close — by the rule due that day if one is and the sale goes through, else as
//!   [`ExitReason::Delisted`], even at a limit-down close: delisting ends the position, and
//!   the last close is the value the backtest books for it (a real holder's shares move to
//!   the delisted-shares market, where no bar of ours follows them);
//! * fees to the fen ([`crate::fees`]): commission 0.025 % with a 5 CNY minimum on both
//!   sides, stamp duty on sells 0.1 % (0.05 % from 2023-08-28), transfer fee 0.001 % on
//!   both sides.
//!
//! Exits are checked on closes and executed at that close (daily bars cannot tell whether
//! the low or the high came first). Cash is one portfolio of 100,000 CNY split into
//! `top_n` equal slots (at most `top_n` positions; `top_n` = 0 buys nothing) — or, with
//! [`PositionSizing::Risk`], each buy sized so that selling at the stop-loss loses at most
//! a set percent of equity, fees included, within one slot and the cash
//! ([`crate::sizing::backtest_sizing`], the same sizing as `wyckoff size`). Within a
//! day the open comes first: yesterday's picks are bought before that day's close exits,
//! so cash or a slot freed at a close only serves the next open. Sharpe is the mean over
//! the standard deviation of daily equity returns, times √242 (trading days a year), with
//! no risk-free rate. Pure: no I/O, no clock; "today" comes from the caller.
//!
//! The stop-loss is a loss: −8 and 8 both mean "sell at −8 %" (a positive stop used to
//! mean no stop at all, which nobody who types `--stop-loss 8` wants).
//!
//! The picks can be limited to a set of L4 triggers ([`TriggerSet`], default the funnel's
//! Spring, EVR and trend pullback): a candidate keeps only its triggers in the set, is
//! dropped without one, and is ranked by the sum of the kept scores. [`sweep`] runs many
//! parameter combinations over one preparation of the funnel.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::as_of::AsOfNotes;
use crate::cancel::{Cancel, Cancelled, Never, check};
use crate::dates::{days_from_civil, parse_date};
use crate::fees::{COMMISSION_MIN_FEN, COMMISSION_RATE, RATE_BASE, TRANSFER_RATE, stamp_rate};
use crate::funnel::{BoardFilter, Funnel, FunnelConfig, ScreenArgs};
use crate::risk_limits::RiskLimits;
use crate::sizing::{LimitsSource, PositionSizing, backtest_sizing};
use crate::triggers::{Trigger, TriggerKind};
use crate::{Bar, Board, StockSeries, Universe, bars_as_of};
use wyckoff_protocol::RiskBreach;

pub mod sweep;
pub mod tail;
pub mod walk_forward;

pub const INITIAL_CASH: f64 = 100_000.0;
/// Trading days a year, for annualising.
pub const TRADING_DAYS_PER_YEAR: f64 = 242.0;

#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum BacktestError {
    #[error("日期无效: '{0}'，请用 YYYY-MM-DD 或 YYYYMMDD")]
    BadDate(String),
    #[error("start {start} 晚于 end {end}")]
    StartAfterEnd { start: u32, end: u32 },
    #[error("不支持的 board 值 '{0}'，可选: all / main / chinext / star / bse")]
    UnknownBoard(String),
    #[error("entry_price_mode 无效: '{0}'，可选: open / close / 1455")]
    BadEntryMode(String),
    #[error("{0} 必须是有限数字")]
    NotANumber(&'static str),
    #[error(
        "未知的 L4 触发器 '{0}'，可选: spring / evr / trend_pb / sos / lps / compression（用 + 连接，如 spring+evr）"
    )]
    UnknownTrigger(String),
    #[error("触发器集合为空：至少给一个 L4 触发器，如 spring+evr+trend_pb")]
    NoTriggers,
    #[error("[{start}, {end}] 内没有任何交易日的K线（本地数据覆盖 {first}–{last}）")]
    NoBarsInRange {
        start: u32,
        end: u32,
        first: u32,
        last: u32,
    },
    #[error("本地没有任何股票K线，无法回测")]
    EmptyUniverse,
    /// The caller cancelled the run ([`crate::Cancel`]); nothing is reported.
    #[error("回测已取消")]
    Cancelled,
    #[error("{0}")]
    BadSizing(String),
    #[error("按风险定仓（sizing=risk）需要止损：stop_loss_pct 不能为 0")]
    RiskSizingNeedsStop,
    /// A 14:55 entry on a day without cached minute bars: nothing is guessed, the run is
    /// refused naming every such pick.
    #[error(
        "14:55 买入需要分钟K线，以下 {count} 个信号日没有缓存（需含 14:55 前的下午K线与 15:00 K线）: {list}。先运行 wyckoff data sync CODE --period 5m（或 15m/30m/60m）"
    )]
    MissingMinuteBars {
        count: usize,
        list: String,
        missing: Vec<(String, u32)>,
    },
}

impl From<Cancelled> for BacktestError {
    fn from(_: Cancelled) -> Self {
        BacktestError::Cancelled
    }
}

/// Where the entry price comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryMode {
    /// The next trading day's open after the signal day.
    #[default]
    Open,
    /// The signal day's close.
    Close,
    /// The signal day's price at 14:55, from cached minute bars ([`tail`]).
    #[serde(rename = "1455")]
    At1455,
}

/// §14.11 arguments, validated and clamped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BacktestArgs {
    pub start: u32,
    pub end: u32,
    /// 1–60 trading days.
    pub hold_days: usize,
    /// 0–20 picks a day (and portfolio slots).
    pub top_n: usize,
    pub board: BoardFilter,
    /// ≤ 0, percent (−8 = sell at −8 %).
    pub stop_loss_pct: f64,
    /// ≥ 0, percent; 0 = no take-profit.
    pub take_profit_pct: f64,
    pub entry_price_mode: EntryMode,
    /// The L4 triggers a pick may come from; absent from the JSON when it is the funnel's
    /// default, so a plain backtest reads as it always did.
    #[serde(default, skip_serializing_if = "TriggerSet::is_default")]
    pub triggers: TriggerSet,
    /// Equal slots, or by risk to the stop-loss ([`crate::sizing::backtest_sizing`]);
    /// absent from the JSON for equal slots.
    #[serde(default, skip_serializing_if = "PositionSizing::is_equal_slots")]
    pub sizing: PositionSizing,
}

/// A set of L4 trigger kinds (a bit each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TriggerSet(u8);

/// Every L4 trigger, in the order the funnel detects them (the order scores are summed in).
pub const ALL_TRIGGERS: [TriggerKind; 6] = [
    TriggerKind::Spring,
    TriggerKind::Evr,
    TriggerKind::TrendPullback,
    TriggerKind::Sos,
    TriggerKind::Lps,
    TriggerKind::Compression,
];

fn trigger_bit(kind: TriggerKind) -> u8 {
    match kind {
        TriggerKind::Spring => 1,
        TriggerKind::Evr => 2,
        TriggerKind::TrendPullback => 4,
        TriggerKind::Sos => 8,
        TriggerKind::Lps => 16,
        TriggerKind::Compression => 32,
    }
}

impl TriggerSet {
    /// The funnel's default (0.9.467): Spring, EVR and the trend pullback.
    pub const FUNNEL_DEFAULT: TriggerSet = TriggerSet(1 | 2 | 4);

    pub fn of(kinds: &[TriggerKind]) -> Self {
        TriggerSet(kinds.iter().fold(0, |bits, k| bits | trigger_bit(*k)))
    }

    pub fn contains(self, kind: TriggerKind) -> bool {
        self.0 & trigger_bit(kind) != 0
    }

    pub fn union(self, other: TriggerSet) -> Self {
        TriggerSet(self.0 | other.0)
    }

    pub fn is_default(&self) -> bool {
        *self == Self::FUNNEL_DEFAULT
    }

    /// The kinds in the set, in the funnel's order.
    pub fn kinds(self) -> impl Iterator<Item = TriggerKind> {
        ALL_TRIGGERS.into_iter().filter(move |k| self.contains(*k))
    }

    /// `Spring+EVR+TrendPB`.
    pub fn label(self) -> String {
        self.kinds()
            .map(TriggerKind::as_str)
            .collect::<Vec<_>>()
            .join("+")
    }

    /// `spring+evr+trend_pb` (any case; `trendpb`, `trend_pullback` and the serialised names
    /// `TrendPB`, `LPS` … are accepted too).
    pub fn parse(text: &str) -> Result<Self, BacktestError> {
        let mut set = TriggerSet(0);
        for name in text.split('+').map(str::trim) {
            let kind = match name
                .to_ascii_lowercase()
                .replace(['_', '-', ' '], "")
                .as_str()
            {
                "spring" => TriggerKind::Spring,
                "evr" => TriggerKind::Evr,
                "trendpb" | "trendpullback" => TriggerKind::TrendPullback,
                "sos" => TriggerKind::Sos,
                "lps" => TriggerKind::Lps,
                "compression" => TriggerKind::Compression,
                "" if text.trim().is_empty() => return Err(BacktestError::NoTriggers),
                _ => return Err(BacktestError::UnknownTrigger(name.to_owned())),
            };
            set = set.union(TriggerSet::of(&[kind]));
        }
        Ok(set)
    }

    /// The funnel configuration that detects every trigger of the set (Spring, EVR and the
    /// trend pullback always run; the others are switches).
    pub fn funnel_config(self) -> FunnelConfig {
        FunnelConfig {
            enable_sos_trigger: self.contains(TriggerKind::Sos),
            enable_lps_trigger: self.contains(TriggerKind::Lps),
            enable_compression_trigger: self.contains(TriggerKind::Compression),
            ..FunnelConfig::default()
        }
    }
}

impl Default for TriggerSet {
    fn default() -> Self {
        Self::FUNNEL_DEFAULT
    }
}

impl Serialize for TriggerSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.kinds())
    }
}

impl<'de> Deserialize<'de> for TriggerSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let kinds = Vec::<TriggerKind>::deserialize(d)?;
        Ok(TriggerSet::of(&kinds))
    }
}

/// Raw arguments as a tool or the CLI spells them.
#[derive(Debug, Clone, Default)]
pub struct RawBacktestArgs<'a> {
    pub start: Option<&'a str>,
    pub end: Option<&'a str>,
    pub hold_days: Option<i64>,
    pub top_n: Option<i64>,
    pub board: Option<&'a str>,
    pub stop_loss_pct: Option<f64>,
    pub take_profit_pct: Option<f64>,
    pub entry_price_mode: Option<&'a str>,
    /// `spring+evr+trend_pb`; absent = the funnel's default.
    pub triggers: Option<&'a str>,
    /// `equal` (default) or `risk`.
    pub sizing: Option<&'a str>,
    /// Percent of equity at risk a trade with `risk` sizing (default 1).
    pub risk_pct: Option<f64>,
}

fn shift_days(date: u32, days: i64) -> u32 {
    days_from_civil(date).map_or(date, |d| crate::dates::civil_from_days(d + days))
}

impl BacktestArgs {
    /// Defaults of §14.11: start = today − 180 days, end = yesterday, hold 10, top 4, all
    /// boards, stop −8 %, no take-profit, entry at the open. `today` is the caller's.
    pub fn parse(raw: &RawBacktestArgs<'_>, today: u32) -> Result<Self, BacktestError> {
        let date = |s: Option<&str>, default: u32| -> Result<u32, BacktestError> {
            match s.map(str::trim).filter(|s| !s.is_empty()) {
                None => Ok(default),
                Some(s) => {
                    let head: String = s.chars().take(10).collect();
                    parse_date(&head).ok_or_else(|| BacktestError::BadDate(s.to_owned()))
                }
            }
        };
        let start = date(raw.start, shift_days(today, -180))?;
        let end = date(raw.end, shift_days(today, -1))?;
        if start > end {
            return Err(BacktestError::StartAfterEnd { start, end });
        }
        let finite = |x: Option<f64>, name: &'static str, default: f64| match x {
            None => Ok(default),
            Some(v) if v.is_finite() => Ok(v),
            Some(_) => Err(BacktestError::NotANumber(name)),
        };
        let board = match raw.board.map(str::trim).filter(|s| !s.is_empty()) {
            None => BoardFilter::All,
            Some(b) => b
                .parse()
                .map_err(|_| BacktestError::UnknownBoard(b.to_owned()))?,
        };
        let entry_price_mode = EntryMode::parse(raw.entry_price_mode.unwrap_or(""))?;
        let stop_loss_pct = as_loss(finite(raw.stop_loss_pct, "stop_loss_pct", -8.0)?);
        let sizing =
            PositionSizing::parse(raw.sizing, raw.risk_pct).map_err(BacktestError::BadSizing)?;
        if !sizing.is_equal_slots() && stop_loss_pct == 0.0 {
            return Err(BacktestError::RiskSizingNeedsStop);
        }
        Ok(BacktestArgs {
            start,
            end,
            hold_days: clamp_hold_days(raw.hold_days.unwrap_or(10)),
            top_n: clamp_top_n(raw.top_n.unwrap_or(4)),
            board,
            stop_loss_pct,
            take_profit_pct: finite(raw.take_profit_pct, "take_profit_pct", 0.0)?.max(0.0),
            entry_price_mode,
            triggers: match raw.triggers.map(str::trim).filter(|s| !s.is_empty()) {
                None => TriggerSet::FUNNEL_DEFAULT,
                Some(t) => TriggerSet::parse(t)?,
            },
            sizing,
        })
    }
}

/// Hold days clamped to 1–60.
pub fn clamp_hold_days(n: i64) -> usize {
    n.clamp(1, 60) as usize
}

/// Picks a day (and slots) clamped to 0–20.
pub fn clamp_top_n(n: i64) -> usize {
    n.clamp(0, 20) as usize
}

impl EntryMode {
    /// `open` (or empty), `close`, the reference's `tail_1455` (a close on daily bars), or
    /// `1455` (the 14:55 price from minute bars).
    pub fn parse(text: &str) -> Result<Self, BacktestError> {
        match text.trim() {
            "" | "open" => Ok(EntryMode::Open),
            "close" | "tail_1455" => Ok(EntryMode::Close),
            "1455" | "14:55" | "at_1455" => Ok(EntryMode::At1455),
            other => Err(BacktestError::BadEntryMode(other.to_owned())),
        }
    }
}

/// A stop-loss of either sign as the loss it means: −|pct| (0 stays 0, never −0).
pub fn as_loss(pct: f64) -> f64 {
    if pct == 0.0 { 0.0 } else { -pct.abs() }
}

/// Decides, at one close, which stocks to buy: ranked codes, using only bars dated ≤ `day`.
pub trait SignalSource {
    fn picks(&mut self, day: u32) -> Vec<String>;
}

/// The funnel as the signal source: its candidates, by score, limited to a trigger set.
pub struct FunnelSignals<'u> {
    funnel: Funnel<'u>,
    board: BoardFilter,
    triggers: TriggerSet,
    /// Asked before each layer of each day's screen; a cancelled screen gives no picks
    /// (and the backtest stops at its next day).
    cancel: &'u dyn Cancel,
    /// Days the regime gate would have blocked new buys (reported, not enforced).
    pub gated_days: usize,
}

impl<'u> FunnelSignals<'u> {
    pub fn new(universe: &'u Universe, board: BoardFilter) -> Self {
        Self::cancellable(universe, board, &Never)
            .unwrap_or_else(|Cancelled| unreachable!("Never does not cancel"))
    }

    /// [`Self::new`] whose preparation (seconds on the full market) and daily screens stop
    /// once `cancel` says so.
    pub fn cancellable(
        universe: &'u Universe,
        board: BoardFilter,
        cancel: &'u dyn Cancel,
    ) -> Result<Self, Cancelled> {
        Self::with_triggers(universe, board, TriggerSet::FUNNEL_DEFAULT, cancel)
    }

    /// [`Self::cancellable`] whose picks come only from the L4 triggers in `triggers`.
    pub fn with_triggers(
        universe: &'u Universe,
        board: BoardFilter,
        triggers: TriggerSet,
        cancel: &'u dyn Cancel,
    ) -> Result<Self, Cancelled> {
        Ok(FunnelSignals {
            funnel: prepare_for_days(universe, triggers, cancel)?,
            board,
            triggers,
            cancel,
            gated_days: 0,
        })
    }
}

impl SignalSource for FunnelSignals<'_> {
    fn picks(&mut self, day: u32) -> Vec<String> {
        match screen_day(&self.funnel, self.board, day, self.cancel) {
            Some(screened) => {
                if !screened.new_buy_allowed {
                    self.gated_days += 1;
                }
                screened.ranked(self.triggers)
            }
            None => Vec::new(),
        }
    }
}

/// The funnel prepared for screening many days, detecting every trigger of `triggers`.
pub(crate) fn prepare_for_days<'u>(
    universe: &'u Universe,
    triggers: TriggerSet,
    cancel: &dyn Cancel,
) -> Result<Funnel<'u>, Cancelled> {
    Funnel::prepare_cancellable(universe, &triggers.funnel_config(), cancel)?
        .with_daily_features_cancellable(cancel)
}

/// One day's screen as the backtest uses it.
#[derive(Debug, Clone)]
pub(crate) struct ScreenedDay {
    new_buy_allowed: bool,
    /// The funnel's candidates with their triggers, in the funnel's order.
    candidates: Vec<(String, Vec<Trigger>)>,
}

impl ScreenedDay {
    /// Codes of the candidates with a trigger in `set`, by the sum of those triggers'
    /// scores, then code — the funnel's own ranking when the set holds every trigger found.
    pub(crate) fn ranked(&self, set: TriggerSet) -> Vec<String> {
        let mut kept: Vec<(f64, &str)> = self
            .candidates
            .iter()
            .filter_map(|(code, triggers)| {
                let mine: Vec<&Trigger> =
                    triggers.iter().filter(|t| set.contains(t.kind)).collect();
                (!mine.is_empty()).then(|| (mine.iter().map(|t| t.score).sum(), code.as_str()))
            })
            .collect();
        kept.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        kept.into_iter().map(|(_, code)| code.to_owned()).collect()
    }

    pub(crate) fn new_buy_allowed(&self) -> bool {
        self.new_buy_allowed
    }
}

/// The screen of `day`, or `None` when it was cancelled or the day is not a trading day
/// of the funnel's calendar (no picks either way).
pub(crate) fn screen_day(
    funnel: &Funnel<'_>,
    board: BoardFilter,
    day: u32,
    cancel: &dyn Cancel,
) -> Option<ScreenedDay> {
    let args = ScreenArgs {
        board,
        limit: 0,
        as_of: Some(day),
    };
    match funnel.screen_cancellable(&args, cancel) {
        Ok(r) if r.as_of == Some(day) => Some(ScreenedDay {
            new_buy_allowed: r.regime.new_buy_allowed,
            candidates: r
                .candidates
                .into_iter()
                .map(|c| (c.code, c.triggers))
                .collect(),
        }),
        _ => None,
    }
}

/// To the fen, half away from zero.
pub fn fen(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Limit-up and limit-down prices from the previous close.
/// What a sweep's or walk-forward's sizing means, for its notes (none for equal slots).
pub(crate) fn grid_sizing_notes(sizing: &PositionSizing) -> Vec<String> {
    match sizing {
        PositionSizing::EqualSlots => Vec::new(),
        PositionSizing::Risk {
            risk_bp,
            limits,
            limits_from,
        } => vec![
            format!(
                "按风险定仓（每个组合）：每笔在该组合的止损处最多亏权益的 {}%（含双边费用），单只不超过权益的 1/top_n，按板块手数向下取整",
                f64::from(*risk_bp) / 100.0
            ),
            limits_note(limits, *limits_from),
        ],
    }
}

/// The account limits a risk-sized run applied, and where they came from.
fn limits_note(limits: &RiskLimits, from: LimitsSource) -> String {
    let pct = |bp: u32| f64::from(bp) / 100.0;
    format!(
        "账户限制（{}）：总风险（到止损）不超过权益的 {}%（超出的买入记为 heat_cap 跳过），最多 {} 只（positions_limit），权益低于最高点 {}% 起不再买入（drawdown_brake），{} 天内 {} 笔亏损卖出后不再买入（stop_out_brake）；0 为关闭；单一行业上限不执行（股票的行业只有今天的分类）",
        match from {
            LimitsSource::Settings => "取自设置",
            LimitsSource::EngineDefault => "引擎默认值，未读设置",
        },
        pct(limits.max_heat_bp),
        limits.max_positions,
        pct(limits.drawdown_brake_bp),
        limits.stop_out_days,
        limits.max_stop_outs,
    )
}

/// Yuan as whole fen, for the account limits' integer arithmetic.
fn fen_i64(yuan: f64) -> i64 {
    (yuan * 100.0).round() as i64
}

/// How far `equity` is below `high`, whole basis points rounded down (so a drawdown
/// reaches a limit only when it truly does); 0 before any high or above it.
fn drawdown_bp(high: f64, equity: f64) -> u32 {
    if high <= 0.0 || equity >= high {
        return 0;
    }
    ((high - equity) / high * 1e4).floor().clamp(0.0, 1e4) as u32
}

pub fn limit_prices(prev_close: f64, limit: f64) -> (f64, f64) {
    (
        fen(prev_close * (1.0 + limit)),
        fen(prev_close * (1.0 - limit)),
    )
}

/// Fees of one side of a trade of `amount` CNY on `date`: (commission, stamp duty,
/// transfer fee), each to the fen — the schedule's rates ([`crate::fees`]) on the `f64`
/// amount. `25.0 / 100_000.0` is the same `f64` as `0.000_25`, so the figures are those of
/// the literal rates. Not the exact fen schedule ([`crate::fees::fees_for`]): the amount
/// (price × shares) is a float product just off the fen, and on a half-fen tie that rounds
/// a fen apart from the journal — rounding it to the fen first would change such trades'
/// fees and P/L by a fen.
pub fn fees(amount: f64, sell: bool, date: u32) -> (f64, f64, f64) {
    let part = |rate: i64| fen(amount * (rate as f64 / RATE_BASE as f64));
    let commission = part(COMMISSION_RATE).max(COMMISSION_MIN_FEN as f64 / 100.0);
    let stamp = if sell {
        part(stamp_rate(sell, date))
    } else {
        0.0
    };
    (commission, stamp, part(TRANSFER_RATE))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitReason {
    StopLoss,
    TakeProfit,
    HoldExpired,
    EndOfPeriod,
    /// Still held when the data ran out (valued at the last close, not sold).
    OpenAtEnd,
    /// Held into the stock's last trading day before delisting, with no rule's sale going
    /// through that day (none due, or a limit-down close): closed at that close anyway,
    /// since delisting ends the position.
    Delisted,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trade {
    pub code: String,
    /// The name the stock carried on the entry day (today's where no history covers it).
    pub name: String,
    pub signal_date: u32,
    pub entry_date: u32,
    pub entry_price: f64,
    pub exit_date: u32,
    pub exit_price: f64,
    pub shares: u64,
    /// Both sides: commission + stamp duty + transfer fee.
    pub fees: f64,
    pub pnl: f64,
    pub pnl_pct: f64,
    pub exit_reason: ExitReason,
    /// Trading days the sale waited on limit-down closes.
    pub limit_down_days: usize,
    pub held_days: usize,
    /// With risk sizing: what the buy stood to lose at the stop-loss and the equity it
    /// was sized from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_risk: Option<EntryRisk>,
}

/// A risk-sized buy's loss at the stop-loss (both sides' fees included), the equity it
/// was sized from, and the first as a percent of the second.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EntryRisk {
    pub risk: f64,
    pub equity: f64,
    pub risk_pct: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EquityPoint {
    pub date: u32,
    pub equity: f64,
    pub cash: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub total_return_pct: f64,
    pub annualized_return_pct: f64,
    pub max_drawdown_pct: f64,
    /// `None` without closed trades.
    pub win_rate_pct: Option<f64>,
    /// Gross profit / gross loss; `None` without a losing trade.
    pub profit_factor: Option<f64>,
    /// Daily returns, annualised with √242, no risk-free rate; `None` when flat.
    pub sharpe: Option<f64>,
    /// Traded value (both sides) / average equity.
    pub turnover: f64,
    pub trades: usize,
    pub fees: f64,
    pub final_equity: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchmarkReturn {
    pub code: String,
    pub return_pct: Option<f64>,
    /// Why there is no figure, when there is none.
    pub note: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BacktestResult {
    pub args: BacktestArgs,
    /// First and last trading day simulated.
    pub first_day: u32,
    pub last_day: u32,
    pub trading_days: usize,
    pub initial_cash: f64,
    pub metrics: Metrics,
    pub trades: Vec<Trade>,
    pub equity_curve: Vec<EquityPoint>,
    pub benchmark: BenchmarkReturn,
    /// Days with at least one signal (the source is asked only when a slot is free).
    pub signal_days: usize,
    /// Picks not bought, by reason (`limit_up`, `no_bar`, `lot_too_expensive`, `held`,
    /// `delisted`: on or after the stock's last trading day; with risk sizing
    /// `risk_below_a_lot`: the risk budget does not pay for the board's smallest buy).
    pub skipped_entries: BTreeMap<String, usize>,
    pub notes: Vec<String>,
    /// Which point-in-time inputs over the period were today's (ST from today's names,
    /// today's market caps in the daily screens) and the stocks delisted within it; each
    /// fallback also a line of `notes`.
    #[serde(default)]
    pub as_of_notes: AsOfNotes,
}

struct Position {
    stock: usize,
    signal_date: u32,
    entry_price: f64,
    shares: u64,
    buy_fees: f64,
    hold: Holding,
    entry_risk: Option<EntryRisk>,
}

/// One position's days under T+1, as the backtest holds it and forward tracking follows
/// it: the entry day's close is no selling day, a day the stock has no bar (suspended) is
/// no day held, and a sale due on a limit-down close (no buyers) waits for the next close
/// that is not one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Holding {
    pub entry_date: u32,
    /// Closes after the entry day on which the stock traded.
    pub held: usize,
    /// Closes a due sale waited through at the limit-down.
    pub limit_down_days: usize,
}

impl Holding {
    pub fn new(entry_date: u32) -> Self {
        Holding {
            entry_date,
            held: 0,
            limit_down_days: 0,
        }
    }

    /// Counts the close of `date`, a day the stock traded; false on the entry day, whose
    /// shares T+1 does not let go until the next trading day.
    pub fn count_close(&mut self, date: u32) -> bool {
        if date == self.entry_date {
            return false;
        }
        self.held += 1;
        true
    }

    /// Whether `hold_days` closes have been held, so the holding period is over.
    pub fn expired(&self, hold_days: usize) -> bool {
        self.held >= hold_days
    }

    /// Whether a sale due at the close of `bars[i]` goes through: not at a limit-down
    /// close, which is counted and carried to the next close.
    pub fn sell_at(&mut self, board: Board, is_st: bool, bars: &[Bar], i: usize) -> bool {
        if at_limit_down(board, is_st, bars, i) {
            self.limit_down_days += 1;
            return false;
        }
        true
    }
}

/// What a sale books, as a trade of the backtest: every figure to the fen the way its
/// trades carry them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sale {
    /// Proceeds before fees, CNY.
    pub amount: f64,
    /// Commission, stamp duty and transfer fee of the sell.
    pub sell_fees: f64,
    /// Both sides' fees.
    pub fees: f64,
    /// Profit after both sides' fees.
    pub pnl: f64,
    /// `pnl` over the cost with the buy fees, percent.
    pub pnl_pct: f64,
}

/// Fees of a buy of `amount` CNY on `date` (commission and transfer fee; no stamp duty).
pub fn buy_fees(amount: f64, date: u32) -> f64 {
    let (c, _, t) = fees(amount, false, date);
    c + t
}

/// The sale of `shares` bought at `entry_price` (paying `buy_fees`) at `price` on `date`.
pub fn sale(entry_price: f64, shares: u64, buy_fees: f64, price: f64, date: u32) -> Sale {
    let amount = price * shares as f64;
    let (c, st, t) = fees(amount, true, date);
    let sell_fees = c + st + t;
    let cost = entry_price * shares as f64;
    let pnl = fen(amount - sell_fees - cost - buy_fees);
    Sale {
        amount,
        sell_fees,
        fees: fen(buy_fees + sell_fees),
        pnl,
        pnl_pct: pnl / (cost + buy_fees) * 100.0,
    }
}

/// Index of `date`'s bar in `bars`, if the stock traded that day.
fn bar_on(bars: &[Bar], date: u32) -> Option<usize> {
    bars.binary_search_by_key(&date, |b| b.date).ok()
}

fn last_close(bars: &[Bar], date: u32) -> Option<f64> {
    bars_as_of(bars, date).last().map(|b| b.close)
}

/// Whether `bars[i]` closed at its limit-down (from the previous close; the first bar has
/// no limit).
pub fn at_limit_down(board: Board, is_st: bool, bars: &[Bar], i: usize) -> bool {
    i > 0 && i < bars.len() && {
        let limit = board.limit_fraction(is_st, bars[i].date);
        let (_, down) = limit_prices(bars[i - 1].close, limit);
        bars[i].close <= down
    }
}

/// Whether a buy at `price` on `bars[i]`'s day is at its limit-up, where the backtest does
/// not buy (from the previous close; the first bar has no limit).
pub fn at_limit_up(board: Board, is_st: bool, bars: &[Bar], i: usize, price: f64) -> bool {
    i > 0 && i < bars.len() && {
        let limit = board.limit_fraction(is_st, bars[i].date);
        let (up, _) = limit_prices(bars[i - 1].close, limit);
        price >= up
    }
}

/// [`at_limit_up`] with the stock's ST status on the bar's day.
fn is_at_limit_up(s: &StockSeries, i: usize, price: f64) -> bool {
    at_limit_up(s.board, s.is_st_on(s.bars[i].date).value, &s.bars, i, price)
}

/// Whether a stock can no longer be bought on `date`: delisted, or on its last trading
/// day (a share bought then could never be sold under T+1).
fn delisted_by(s: &StockSeries, date: u32) -> bool {
    !s.listed_on(date) || s.last_trading_day().is_some_and(|last| date >= last)
}

/// Why a held position is closed at the close of `date`, its last trading day
/// (`final_day`) or not: the rule due that day if its sale goes through; on the final day
/// [`ExitReason::Delisted`] when no rule's sale does. `None`: still held.
pub fn exit_at_close(due: Option<ExitReason>, sold: bool, final_day: bool) -> Option<ExitReason> {
    match (due, sold, final_day) {
        (Some(reason), true, _) => Some(reason),
        (_, _, true) => Some(ExitReason::Delisted),
        _ => None,
    }
}

/// Runs the backtest over `universe` with `signals` deciding the picks.
pub fn run_backtest(
    universe: &Universe,
    args: &BacktestArgs,
    signals: &mut dyn SignalSource,
) -> Result<BacktestResult, BacktestError> {
    run_backtest_cancellable(universe, args, signals, &Never)
}

/// [`run_backtest`] that asks `cancel` before each simulated day and returns
/// [`BacktestError::Cancelled`] at the first yes (a day is one screen at most: well under
/// a second on the full market).
pub fn run_backtest_cancellable(
    universe: &Universe,
    args: &BacktestArgs,
    signals: &mut dyn SignalSource,
    cancel: &dyn Cancel,
) -> Result<BacktestResult, BacktestError> {
    simulate(&Tape::new(universe)?, args, signals, cancel)
}

/// [`run_backtest_cancellable`] with the 14:55 prices an [`EntryMode::At1455`] run buys at;
/// a pick on a day `tails` lacks refuses the run ([`BacktestError::MissingMinuteBars`]).
pub fn run_backtest_with_tails(
    universe: &Universe,
    args: &BacktestArgs,
    signals: &mut dyn SignalSource,
    cancel: &dyn Cancel,
    tails: &tail::TailEntries,
) -> Result<BacktestResult, BacktestError> {
    let mut tape = Tape::new(universe)?;
    tape.tails = Some(tails);
    simulate(&tape, args, signals, cancel)
}

/// The trading calendar the data implies and the code index: computed once, shared by
/// every run of a sweep.
pub(crate) struct Tape<'u> {
    universe: &'u Universe,
    /// Every date with a stock bar, ascending (never empty).
    days: Vec<u32>,
    index: HashMap<&'u str, usize>,
    /// The 14:55 prices, for [`EntryMode::At1455`].
    tails: Option<&'u tail::TailEntries>,
}

impl Tape<'_> {
    /// The point-in-time notes of a run over [`start`, `end`] on `board`, the data's newest
    /// day being the tape's last.
    pub(crate) fn as_of_notes(&self, board: BoardFilter, start: u32, end: u32) -> AsOfNotes {
        let current = self.days[self.days.len() - 1];
        AsOfNotes::of_period(
            self.universe,
            |s| board.admits(s.board),
            start,
            end,
            current,
        )
    }
}

impl<'u> Tape<'u> {
    pub(crate) fn new(universe: &'u Universe) -> Result<Self, BacktestError> {
        if universe.stocks.is_empty() {
            return Err(BacktestError::EmptyUniverse);
        }
        let mut days: Vec<u32> = universe
            .stocks
            .iter()
            .flat_map(|s| s.bars.iter().map(|b| b.date))
            .collect();
        days.sort_unstable();
        days.dedup();
        if days.is_empty() {
            return Err(BacktestError::EmptyUniverse);
        }
        let index = universe
            .stocks
            .iter()
            .enumerate()
            .map(|(i, s)| (s.code.as_str(), i))
            .collect();
        Ok(Tape {
            universe,
            days,
            index,
            tails: None,
        })
    }

    /// The trading days of [start, end], or why there are none.
    pub(crate) fn in_range(&self, start: u32, end: u32) -> Result<Vec<u32>, BacktestError> {
        let in_range: Vec<u32> = self
            .days
            .iter()
            .copied()
            .filter(|d| (start..=end).contains(d))
            .collect();
        if in_range.is_empty() {
            return Err(BacktestError::NoBarsInRange {
                start,
                end,
                first: self.days[0],
                last: self.days[self.days.len() - 1],
            });
        }
        Ok(in_range)
    }
}

/// The day-by-day simulation over a prepared [`Tape`].
pub(crate) fn simulate(
    tape: &Tape<'_>,
    args: &BacktestArgs,
    signals: &mut dyn SignalSource,
    cancel: &dyn Cancel,
) -> Result<BacktestResult, BacktestError> {
    simulate_seeing(tape, args, signals, cancel, u32::MAX)
}

/// [`simulate`] that never reads a bar dated after `horizon`: no walk past the period to
/// sell what limit-downs held, and such positions valued at their last close by `horizon`
/// (a walk-forward's in-sample run must not see its out-of-sample bars).
pub(crate) fn simulate_seeing(
    tape: &Tape<'_>,
    args: &BacktestArgs,
    signals: &mut dyn SignalSource,
    cancel: &dyn Cancel,
    horizon: u32,
) -> Result<BacktestResult, BacktestError> {
    let universe = tape.universe;
    let days = &tape.days;
    let index = &tape.index;
    let in_range = tape.in_range(args.start, args.end)?;
    let after: Vec<u32> = days
        .iter()
        .copied()
        .filter(|d| *d > args.end && *d <= horizon)
        .collect();

    let mut cash = INITIAL_CASH;
    let mut open: Vec<Position> = Vec::new();
    let mut trades: Vec<Trade> = Vec::new();
    let mut curve: Vec<EquityPoint> = Vec::new();
    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    // The highest closing equity so far (the drawdown brake's reference).
    let mut equity_high = 0.0_f64;
    let mut traded_value = 0.0;
    let mut total_fees = 0.0;
    let mut signal_days = 0;
    // Picks of the previous close, bought at today's open (open mode).
    let mut pending: Vec<(u32, Vec<String>)> = Vec::new();
    // Picks a 14:55 entry had no minute bars for: the run is refused naming them.
    let mut no_tail: Vec<(String, u32)> = Vec::new();
    let mut tail_bars: BTreeMap<String, usize> = BTreeMap::new();

    let equity_of = |cash: f64, open: &[Position], date: u32| -> f64 {
        cash + open
            .iter()
            .map(|p| {
                let bars = &universe.stocks[p.stock].bars;
                last_close(bars, date).unwrap_or(p.entry_price) * p.shares as f64
            })
            .sum::<f64>()
    };

    // The simulation walks the range, then past its end only to sell what limit-downs held.
    let walk: Vec<(u32, bool)> = in_range
        .iter()
        .map(|d| (*d, true))
        .chain(after.iter().map(|d| (*d, false)))
        .collect();
    for (pos, &(day, in_period)) in walk.iter().enumerate() {
        check(cancel)?;
        if !in_period && open.is_empty() {
            break;
        }
        let last_in_period = in_period && walk.get(pos + 1).is_none_or(|(_, p)| !*p);

        // At the open: yesterday's picks (open mode) are bought before anything is sold,
        // so a slot or cash freed at today's close cannot pay for this morning's buy.
        // At the close: exits, then today's screen — only when a slot is free for its picks
        // (the screen is the expensive part; picks no slot can take change nothing).
        for at_close in [false, true] {
            if at_close {
                // 1. Exits (T+1: not on the entry day), at the close.
                let mut still = Vec::with_capacity(open.len());
                for mut p in open.drain(..) {
                    let s = &universe.stocks[p.stock];
                    let Some(i) = bar_on(&s.bars, day) else {
                        still.push(p); // suspended: nothing trades
                        continue;
                    };
                    let final_day = s.last_trading_day() == Some(day);
                    if !p.hold.count_close(day) && !final_day {
                        still.push(p);
                        continue;
                    }
                    let close = s.bars[i].close;
                    let change = (close / p.entry_price - 1.0) * 100.0;
                    let due = if args.stop_loss_pct < 0.0 && change <= args.stop_loss_pct {
                        Some(ExitReason::StopLoss)
                    } else if args.take_profit_pct > 0.0 && change >= args.take_profit_pct {
                        Some(ExitReason::TakeProfit)
                    } else if p.hold.expired(args.hold_days) {
                        Some(ExitReason::HoldExpired)
                    } else if last_in_period || !in_period {
                        Some(ExitReason::EndOfPeriod)
                    } else {
                        None
                    };
                    let sold =
                        due.is_some() && p.hold.sell_at(s.board, s.is_st_on(day).value, &s.bars, i);
                    let Some(reason) = exit_at_close(due, sold, final_day) else {
                        still.push(p);
                        continue;
                    };
                    let sold = sale(p.entry_price, p.shares, p.buy_fees, close, day);
                    cash += sold.amount - sold.sell_fees;
                    traded_value += sold.amount;
                    total_fees += sold.sell_fees;
                    trades.push(Trade {
                        code: s.code.clone(),
                        name: s.name_on(p.hold.entry_date).value.to_owned(),
                        signal_date: p.signal_date,
                        entry_date: p.hold.entry_date,
                        entry_price: p.entry_price,
                        exit_date: day,
                        exit_price: close,
                        shares: p.shares,
                        fees: sold.fees,
                        pnl: sold.pnl,
                        pnl_pct: sold.pnl_pct,
                        exit_reason: reason,
                        limit_down_days: p.hold.limit_down_days,
                        held_days: p.hold.held,
                        entry_risk: p.entry_risk,
                    });
                }
                open = still;
            }
            if !in_period {
                continue;
            }
            let buys: Vec<(u32, Vec<String>)> = if !at_close {
                if args.entry_price_mode == EntryMode::Open {
                    std::mem::take(&mut pending)
                } else {
                    Vec::new()
                }
            } else {
                // At the open, picks of the period's last close have no day left to buy on.
                let usable = open.len() < args.top_n
                    && !(args.entry_price_mode == EntryMode::Open && last_in_period);
                if usable {
                    let today_picks = signals.picks(day);
                    if !today_picks.is_empty() {
                        signal_days += 1;
                    }
                    match args.entry_price_mode {
                        EntryMode::Open => {
                            pending.push((day, today_picks));
                            Vec::new()
                        }
                        EntryMode::Close | EntryMode::At1455 => vec![(day, today_picks)],
                    }
                } else {
                    Vec::new()
                }
            };
            for (signal_date, picks) in buys {
                for code in picks {
                    if open.len() >= args.top_n {
                        break;
                    }
                    let Some(&k) = index.get(code.as_str()) else {
                        continue;
                    };
                    let s = &universe.stocks[k];
                    if open.iter().any(|p| p.stock == k) {
                        *skipped.entry("held".into()).or_default() += 1;
                        continue;
                    }
                    if delisted_by(s, day) {
                        *skipped.entry("delisted".into()).or_default() += 1;
                        continue;
                    }
                    let Some(i) = bar_on(&s.bars, day) else {
                        *skipped.entry("no_bar".into()).or_default() += 1;
                        continue;
                    };
                    let price = match args.entry_price_mode {
                        EntryMode::Open => s.bars[i].open,
                        EntryMode::Close => s.bars[i].close,
                        EntryMode::At1455 => match tape.tails.and_then(|t| t.get(&s.code, day)) {
                            Some(e) => {
                                *tail_bars
                                    .entry(format!("{}m {:04}", e.period_minutes, e.bar_end))
                                    .or_default() += 1;
                                tail::price_at_1455(s.bars[i].close, e)
                            }
                            None => {
                                no_tail.push((s.code.clone(), day));
                                continue;
                            }
                        },
                    };
                    if is_at_limit_up(s, i, price) {
                        *skipped.entry("limit_up".into()).or_default() += 1;
                        continue;
                    }
                    let lot = s.board.lot_rule();
                    let mut entry_risk = None;
                    let mut shares = match args.sizing {
                        PositionSizing::EqualSlots => {
                            let slots_left = (args.top_n - open.len()) as f64;
                            let budget = (equity_of(cash, &open, day) / args.top_n as f64)
                                .min(cash / slots_left.max(1.0))
                                .min(cash);
                            // The largest buy of the board's lots the budget pays for.
                            lot.round_down((budget / price).floor() as u64)
                        }
                        PositionSizing::Risk {
                            risk_bp, limits, ..
                        } => {
                            let equity = equity_of(cash, &open, day);
                            // The brake, as the account limits define it: no buy while
                            // equity is the limit below its high, or after the limit's
                            // losing sales within the window (this run's sales so far).
                            let braked = crate::risk_limits::brake(
                                &crate::risk_limits::Account {
                                    equity_fen: fen_i64(equity),
                                    drawdown_bp: drawdown_bp(equity_high, equity),
                                    positions: Vec::new(),
                                    losing_sales: trades
                                        .iter()
                                        .filter(|t| t.pnl < 0.0)
                                        .map(|t| t.exit_date)
                                        .collect(),
                                    today: day,
                                },
                                &limits,
                            );
                            if let Some(b) = braked.first() {
                                let why = match b {
                                    RiskBreach::StopOuts { .. } => "stop_out_brake",
                                    _ => "drawdown_brake",
                                };
                                *skipped.entry(why.into()).or_default() += 1;
                                continue;
                            }
                            if limits.max_positions > 0
                                && open.len() >= limits.max_positions as usize
                            {
                                *skipped.entry("positions_limit".into()).or_default() += 1;
                                continue;
                            }
                            let sized = backtest_sizing(
                                s.board,
                                day,
                                price,
                                args.stop_loss_pct,
                                equity,
                                cash,
                                risk_bp,
                                args.top_n,
                            );
                            match sized {
                                Some(z) if z.risk_shares == 0 => {
                                    *skipped.entry("risk_below_a_lot".into()).or_default() += 1;
                                    continue;
                                }
                                Some(z) => {
                                    // The heat cap: the open positions' risk to their stops
                                    // (at the last close) and this buy's, within the cap.
                                    let heat: f64 = open
                                        .iter()
                                        .map(|p| {
                                            let bars = &universe.stocks[p.stock].bars;
                                            let last =
                                                last_close(bars, day).unwrap_or(p.entry_price);
                                            let stop =
                                                p.entry_price * (1.0 + args.stop_loss_pct / 100.0);
                                            (last - stop).max(0.0) * p.shares as f64
                                        })
                                        .sum();
                                    let risk = z.risk_fen as f64 / 100.0;
                                    if limits.max_heat_bp > 0
                                        && z.shares > 0
                                        && heat + risk
                                            > equity * f64::from(limits.max_heat_bp) / 1e4
                                    {
                                        *skipped.entry("heat_cap".into()).or_default() += 1;
                                        continue;
                                    }
                                    entry_risk = Some(EntryRisk {
                                        risk,
                                        equity,
                                        risk_pct: z.risk_pct,
                                    });
                                    z.shares
                                }
                                None => 0,
                            }
                        }
                    };
                    // Fees included (the f64 charges below may differ from the fen
                    // schedule by a fen on a half-fen tie).
                    while shares > 0 {
                        let amount = price * shares as f64;
                        let (c, _, t) = fees(amount, false, day);
                        if amount + c + t <= cash {
                            break;
                        }
                        shares = lot.round_down(shares - 1);
                    }
                    if shares == 0 {
                        *skipped.entry("lot_too_expensive".into()).or_default() += 1;
                        continue;
                    }
                    let amount = price * shares as f64;
                    let (c, _, t) = fees(amount, false, day);
                    cash -= amount + c + t;
                    traded_value += amount;
                    total_fees += c + t;
                    open.push(Position {
                        stock: k,
                        signal_date,
                        entry_price: price,
                        shares,
                        buy_fees: c + t,
                        hold: Holding::new(day),
                        entry_risk,
                    });
                }
            }
        }
        if in_period {
            let equity = fen(equity_of(cash, &open, day));
            equity_high = equity_high.max(equity);
            curve.push(EquityPoint {
                date: day,
                equity,
                cash: fen(cash),
            });
        }
    }
    // The last day's picks may have come from a screen cut short by a cancel.
    check(cancel)?;
    if !no_tail.is_empty() {
        return Err(BacktestError::MissingMinuteBars {
            count: no_tail.len(),
            list: tail::missing_list(&no_tail, 20),
            missing: no_tail,
        });
    }
    // What limit-downs still held when the data ran out: valued, not sold.
    for p in open {
        let s = &universe.stocks[p.stock];
        let last = bars_as_of(&s.bars, horizon).last();
        let close = last.map_or(p.entry_price, |b| b.close);
        let cost = p.entry_price * p.shares as f64;
        let pnl = fen(close * p.shares as f64 - cost - p.buy_fees);
        trades.push(Trade {
            code: s.code.clone(),
            name: s.name_on(p.hold.entry_date).value.to_owned(),
            signal_date: p.signal_date,
            entry_date: p.hold.entry_date,
            entry_price: p.entry_price,
            exit_date: last.map_or(p.hold.entry_date, |b| b.date),
            exit_price: close,
            shares: p.shares,
            fees: fen(p.buy_fees),
            pnl,
            pnl_pct: pnl / (cost + p.buy_fees) * 100.0,
            exit_reason: ExitReason::OpenAtEnd,
            limit_down_days: p.hold.limit_down_days,
            held_days: p.hold.held,
            entry_risk: p.entry_risk,
        });
    }
    let first_day = in_range[0];
    let last_day = in_range[in_range.len() - 1];
    let metrics = metrics(&curve, &trades, traded_value, total_fees);
    let mut notes = Vec::new();
    if args.top_n == 0 {
        notes.push("top_n = 0：不买入任何股票".to_owned());
    }
    if let PositionSizing::Risk {
        risk_bp,
        limits,
        limits_from,
    } = args.sizing
    {
        notes.push(format!(
            "按风险定仓：每笔在 {}% 止损处最多亏权益的 {}%（含双边费用），单只不超过权益的 1/{}（按 top_n 等分，不取设置里的单只仓位上限），最多 {} 只；水温只统计不执行：回测只记下水温会挡住新买入的天数，照常买入（与等分仓位一样）",
            -args.stop_loss_pct,
            f64::from(risk_bp) / 100.0,
            args.top_n.max(1),
            args.top_n
        ));
        notes.push(limits_note(&limits, limits_from));
    }
    if args.entry_price_mode == EntryMode::At1455 {
        let read: Vec<String> = tail_bars.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
        notes.push(format!(
            "14:55 买入：信号日 14:55 的价格取自缓存的分钟K线（14:55 前最后一根已收的K线收盘：5 分钟K线即 14:55，15/30/60 分钟为 14:45/14:30/14:00），按当日 15:00 收盘折算到前复权日线；所用K线 {}",
            if read.is_empty() { "无（没有买入）".to_owned() } else { read.join("，") }
        ));
    }
    let as_of_notes = tape.as_of_notes(args.board, first_day, last_day);
    notes.extend(as_of_notes.lines());
    Ok(BacktestResult {
        args: args.clone(),
        first_day,
        last_day,
        trading_days: in_range.len(),
        initial_cash: INITIAL_CASH,
        metrics,
        trades,
        equity_curve: curve,
        benchmark: benchmark(universe, first_day, last_day),
        signal_days,
        skipped_entries: skipped,
        notes,
        as_of_notes,
    })
}

fn metrics(curve: &[EquityPoint], trades: &[Trade], traded: f64, fees: f64) -> Metrics {
    let final_equity = curve.last().map_or(INITIAL_CASH, |p| p.equity);
    let total = final_equity / INITIAL_CASH - 1.0;
    let n = curve.len().max(1) as f64;
    let annual = (1.0 + total).powf(TRADING_DAYS_PER_YEAR / n) - 1.0;
    let mut peak = INITIAL_CASH;
    let mut mdd: f64 = 0.0;
    for p in curve {
        peak = peak.max(p.equity);
        mdd = mdd.max(1.0 - p.equity / peak);
    }
    let returns: Vec<f64> = std::iter::once(INITIAL_CASH)
        .chain(curve.iter().map(|p| p.equity))
        .collect::<Vec<_>>()
        .windows(2)
        .map(|w| w[1] / w[0] - 1.0)
        .collect();
    let mean = returns.iter().sum::<f64>() / returns.len().max(1) as f64;
    let var =
        returns.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (returns.len().max(2) - 1) as f64;
    let sd = var.sqrt();
    let sharpe = (sd > 1e-12).then(|| mean / sd * TRADING_DAYS_PER_YEAR.sqrt());
    let closed: Vec<&Trade> = trades
        .iter()
        .filter(|t| t.exit_reason != ExitReason::OpenAtEnd)
        .collect();
    let wins = closed.iter().filter(|t| t.pnl > 0.0).count();
    let gross_win: f64 = closed.iter().filter(|t| t.pnl > 0.0).map(|t| t.pnl).sum();
    let gross_loss: f64 = closed.iter().filter(|t| t.pnl < 0.0).map(|t| -t.pnl).sum();
    let avg_equity = curve.iter().map(|p| p.equity).sum::<f64>() / n;
    Metrics {
        total_return_pct: total * 100.0,
        annualized_return_pct: annual * 100.0,
        max_drawdown_pct: mdd * 100.0,
        win_rate_pct: (!closed.is_empty()).then(|| wins as f64 / closed.len() as f64 * 100.0),
        profit_factor: (gross_loss > 0.0).then(|| gross_win / gross_loss),
        sharpe,
        turnover: if avg_equity > 0.0 {
            traded / avg_equity
        } else {
            0.0
        },
        trades: trades.len(),
        fees: fen(fees),
        final_equity,
    }
}

/// CSI 300 over the span (SSE Composite when CSI 300 is not cached).
fn benchmark(universe: &Universe, first: u32, last: u32) -> BenchmarkReturn {
    let b = &universe.benchmarks;
    let (code, bars) = match (&b.csi300, &b.sse) {
        (Some(c), _) if !c.is_empty() => ("000300.SH", c),
        (_, Some(s)) if !s.is_empty() => ("000001.SH", s),
        _ => {
            return BenchmarkReturn {
                code: "000300.SH".into(),
                return_pct: None,
                note: Some("本地没有沪深300或上证指数K线，无法给出同期基准收益".into()),
            };
        }
    };
    // The close before the first day is the base, so both span the same days.
    let base = bars_as_of(bars, first.saturating_sub(1))
        .last()
        .or_else(|| bars.first());
    let end = bars_as_of(bars, last).last();
    match (base, end) {
        (Some(b0), Some(b1)) if b0.close > 0.0 && b1.date >= first => BenchmarkReturn {
            code: code.into(),
            return_pct: Some((b1.close / b0.close - 1.0) * 100.0),
            note: None,
        },
        _ => BenchmarkReturn {
            code: code.into(),
            return_pct: None,
            note: Some("基准指数K线不覆盖回测区间".into()),
        },
    }
}

#[cfg(test)]
mod tests;
