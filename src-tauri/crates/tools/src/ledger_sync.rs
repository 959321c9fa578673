//! Bringing the closes the ledger is valued at up to date: a stock's daily bars (with
//! their unadjusted closes) through the market's sync, an ETF's, LOF's or bond's
//! unadjusted bars from Eastmoney ([`wyckoff_market::instrument_bars`]) — a bond whose
//! exchange its digits do not settle from the exchange its statement named. Repos need
//! none (valued at their principal). Two reaches: every code the ledger has held
//! ([`sync_ledger`], `wyckoff portfolio sync` and the app's task), and the open positions a
//! whole-market sync leaves out ([`ledger_part`]), which every full-market sync — the
//! overview's button and a scheduled one alike — runs after the market's bars: a user
//! expects a full sync to value what they hold.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Value, json};
use wyckoff_agent::{FnTool, ProgressHandle, Tool, ToolContext, ToolError, ToolSpec};
use wyckoff_engine::Instrument;
use wyckoff_journal::ledger::{LedgerError, replay};
use wyckoff_journal::{Entry, JournalError, JournalStore};
use wyckoff_market::cache::BarTable;
use wyckoff_market::instrument_bars::{
    InstrumentSyncOutcome, InstrumentSyncStatus, LedgerCode, fund_source, sync_instruments,
};
use wyckoff_market::sources::eastmoney_fund::EastmoneyFund;
use wyckoff_market::sync::SyncStatus;
use wyckoff_market::{MarketData, StockCode, SyncTarget};

/// The ledger-closes task's tool name (the task panel and the portfolio page know it by it).
pub const LEDGER_CLOSES_TASK: &str = "sync_ledger_closes";

/// The codes of the ledger's open positions (shares still held after every entry), once
/// each, in code order.
pub fn open_codes(entries: &[Entry]) -> Result<BTreeSet<String>, LedgerError> {
    Ok(replay(entries)?
        .holdings
        .into_iter()
        .filter(|(_, h)| h.shares > 0)
        .map(|(code, _)| code)
        .collect())
}

/// Of the ledger's open positions, the codes a whole-market sync does not fetch itself,
/// once each, in code order: every fund, LOF and bond (the market's list names stocks
/// only), and a stock `covered` says the whole market leaves out (neither listed nor in
/// the cache). Repos need no bars (valued at their principal); a code of no known kind
/// has none to fetch.
pub fn full_sync_extras(open: &BTreeSet<String>, covered: impl Fn(&str) -> bool) -> Vec<String> {
    open.iter()
        .filter(|code| match Instrument::of_code(code) {
            Instrument::Stock => !covered(code),
            Instrument::Fund | Instrument::Bond => true,
            Instrument::Repo | Instrument::Other => false,
        })
        .cloned()
        .collect()
}

/// A full-market sync's ledger part, as its result carries it under `ledger`: the
/// outcomes of [`full_sync_extras`] (funds and bonds from Eastmoney), or the error that
/// stopped it — said, never failing the sync, whose market bars stand.
pub async fn ledger_part(md: &MarketData, progress: &ProgressHandle) -> Value {
    let journal = match JournalStore::new(md.pool().clone(), md.clock().now()).await {
        Ok(j) => j,
        Err(e) => return json!({ "error": e.to_string() }),
    };
    let source = fund_source(md);
    match sync_open_positions(md, &journal, source.as_ref(), progress).await {
        Ok(out) => outcomes_value(&out),
        Err(e) => json!({ "error": e.to_string() }),
    }
}

/// Syncs [`full_sync_extras`] of the ledger (funds and bonds from `source`): a stock counts
/// as covered when the stock list names it or the bar cache holds it (the whole-market
/// sync's own reach).
async fn sync_open_positions(
    md: &MarketData,
    journal: &JournalStore,
    source: Option<&EastmoneyFund>,
    progress: &ProgressHandle,
) -> Result<Vec<InstrumentSyncOutcome>, JournalError> {
    let open = open_codes(&journal.entries(md.clock().now()).await?)?;
    let mut cached = BTreeSet::new();
    for code in open.iter().filter_map(|c| StockCode::parse(c).ok()) {
        let held = md
            .store()
            .coverage_of(BarTable::Stocks, &code.symbol().key())
            .await
            .map_err(|e| JournalError::Market(e.to_string()))?;
        if held.is_some() || md.stock_info(&code).is_some() {
            cached.insert(code.digits().to_owned());
        }
    }
    let extras = full_sync_extras(&open, |c| cached.contains(c));
    sync_codes(md, journal, extras, source, progress).await
}

/// The task that runs the sync (not offered to the model: the user starts it).
pub fn ledger_closes_tool(md: Arc<MarketData>, journal: JournalStore) -> Arc<dyn Tool> {
    Arc::new(FnTool::new(
        ToolSpec::new(LEDGER_CLOSES_TASK, "同步持仓收盘价"),
        "Fetches the daily closes of every code the account ledger has held.",
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
        move |_args: Value, ctx: ToolContext| {
            let md = md.clone();
            let journal = journal.clone();
            async move {
                let out = sync_ledger(&md, &journal, &ctx.progress)
                    .await
                    .map_err(|e| ToolError::Failed(e.to_string()))?;
                Ok(outcomes_value(&out))
            }
        },
    ))
}

/// The task's result: each code's outcome and a one-line summary.
pub fn outcomes_value(out: &[InstrumentSyncOutcome]) -> Value {
    let count = |f: fn(&InstrumentSyncStatus) -> bool| out.iter().filter(|o| f(&o.status)).count();
    let updated = count(|s| matches!(s, InstrumentSyncStatus::Updated { .. }));
    let current = count(|s| matches!(s, InstrumentSyncStatus::UpToDate));
    let failed = count(|s| matches!(s, InstrumentSyncStatus::Failed { .. }));
    let none = count(|s| matches!(s, InstrumentSyncStatus::NotSupported { .. }));
    json!({
        "summary": format!(
            "{} 个代码：{updated} 个更新，{current} 个已是最新，{failed} 个失败，{none} 个不取日线",
            out.len()
        ),
        "outcomes": out,
    })
}

/// Syncs the closes of every code the ledger has held, stocks first; one outcome per
/// code, in code order within each kind. `progress` hears each step (the stocks as one,
/// then each fund or bond).
pub async fn sync_ledger(
    md: &MarketData,
    journal: &JournalStore,
    progress: &ProgressHandle,
) -> Result<Vec<InstrumentSyncOutcome>, JournalError> {
    let entries = journal.entries(md.clock().now()).await?;
    let codes: BTreeSet<String> = entries
        .iter()
        .filter_map(|e| e.kind.code())
        .map(str::to_owned)
        .collect();
    sync_codes(md, journal, codes, fund_source(md).as_ref(), progress).await
}

/// Syncs `codes`' closes: the stocks in one market sync, then each fund or bond (a bond
/// on the exchange its statement named, where the digits leave it open).
async fn sync_codes(
    md: &MarketData,
    journal: &JournalStore,
    codes: impl IntoIterator<Item = String>,
    source: Option<&EastmoneyFund>,
    progress: &ProgressHandle,
) -> Result<Vec<InstrumentSyncOutcome>, JournalError> {
    let stated = journal.stated_exchanges().await?;
    let (stocks, others): (Vec<String>, Vec<String>) = codes
        .into_iter()
        .partition(|c| Instrument::of_code(c) == Instrument::Stock);
    let steps = usize::from(!stocks.is_empty()) + others.len();
    let fraction = |done: usize| (steps > 0).then(|| done as f32 / steps as f32);
    let mut out = Vec::with_capacity(stocks.len() + others.len());
    if !stocks.is_empty() {
        progress.report("股票日线", &format!("{} 只", stocks.len()), fraction(0));
        let report = md
            .sync(SyncTarget::Codes(stocks), &mut |_| {})
            .await
            .map_err(|e| JournalError::Market(e.to_string()))?;
        out.extend(report.outcomes.into_iter().map(|o| InstrumentSyncOutcome {
            code: o.code,
            status: match o.status {
                SyncStatus::UpToDate | SyncStatus::NoNewData => InstrumentSyncStatus::UpToDate,
                SyncStatus::Updated { new_bars, .. } => InstrumentSyncStatus::Updated {
                    new_bars: u32::try_from(new_bars).unwrap_or(u32::MAX),
                    fetched: u32::try_from(new_bars).unwrap_or(u32::MAX),
                    rejected: Vec::new(),
                },
                SyncStatus::Failed { error } => InstrumentSyncStatus::Failed { error },
            },
            last_close: o.last_date.map(wyckoff_market::date::iso),
        }));
    }
    let done_before = steps - others.len();
    let ledger_codes: Vec<LedgerCode> = others
        .iter()
        .map(|c| LedgerCode {
            code: c.clone(),
            stated: stated.get(c).copied(),
        })
        .collect();
    let total = others.len();
    out.extend(
        sync_instruments(md, &ledger_codes, source, &mut |i, code| {
            progress.report(
                "基金、债券日线",
                &format!("{code}（{}/{total}）", i + 1),
                fraction(done_before + i),
            )
        })
        .await
        .map_err(|e| JournalError::Market(e.to_string()))?,
    );
    progress.report("完成", "", fraction(steps));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wyckoff_journal::{EntryKind, Fees, Source};

    fn trade(id: i64, date: u32, code: &str, shares: i64) -> Entry {
        let (price_e6, amount_fen) = (10_000_000, shares.abs() * 1_000);
        let code = code.to_owned();
        Entry {
            id,
            date,
            time: None,
            name: String::new(),
            kind: if shares > 0 {
                EntryKind::Buy {
                    code,
                    shares,
                    price_e6,
                    amount_fen,
                    fees: Fees::default(),
                }
            } else {
                EntryKind::Sell {
                    code,
                    shares: -shares,
                    price_e6,
                    amount_fen,
                    fees: Fees::default(),
                }
            },
            source: Source::Import,
            identity: None,
        }
    }

    #[test]
    fn the_open_positions_are_the_codes_still_held_once_each() {
        let entries = [
            trade(1, 20240102, "510300", 10_000),
            trade(2, 20240103, "600519", 100),
            trade(3, 20240104, "600519", 100),
            // bought and sold out: no longer held
            trade(4, 20240105, "159915", 1_000),
            trade(5, 20240108, "159915", -1_000),
            // partly sold: still held
            trade(6, 20240109, "113050", 20),
            trade(7, 20240110, "113050", -10),
        ];
        let open = open_codes(&entries).unwrap();
        assert_eq!(
            open.into_iter().collect::<Vec<_>>(),
            ["113050", "510300", "600519"]
        );
    }

    #[tokio::test]
    async fn the_full_syncs_ledger_part_asks_for_the_held_fund_alone() {
        use wyckoff_journal::{NewFill, Side};
        use wyckoff_market::test_support::{EastmoneyStub, kline, online_config};

        let home = tempfile::tempdir().unwrap();
        let body = json!({"rc": 0, "data": {"code": "510300", "klines": [
            kline("2020-06-18", 3.40),
            kline("2020-06-19", 3.45),
        ]}})
        .to_string();
        let stub = EastmoneyStub::start(200, body).await.unwrap();
        let md = MarketData::open_with(online_config(home.path(), stub.base()))
            .await
            .unwrap();
        let now = md.clock().now();
        let journal = JournalStore::new(md.pool().clone(), now).await.unwrap();
        // an ETF held, a listed stock held, an ETF bought and sold out
        for (code, name, side, date, price_e6, shares) in [
            (
                "510300",
                "沪深300ETF",
                Side::Buy,
                20200615,
                3_400_000,
                10_000,
            ),
            (
                "600519",
                "贵州茅台",
                Side::Buy,
                20200615,
                1_400_000_000,
                100,
            ),
            ("159915", "创业板ETF", Side::Buy, 20200615, 2_000_000, 1_000),
            (
                "159915",
                "创业板ETF",
                Side::Sell,
                20200616,
                2_100_000,
                1_000,
            ),
        ] {
            let fill = NewFill {
                code: code.into(),
                name: name.into(),
                side,
                date,
                price_e6,
                shares,
                // a fund's fees are the broker's, never worked out
                fees: Some(Fees {
                    commission_fen: 500,
                    ..Fees::default()
                }),
            };
            journal.record(&fill, Source::Cli, now).await.unwrap();
        }
        let source = EastmoneyFund::new(stub.base());
        let out = sync_open_positions(&md, &journal, Some(&source), &ProgressHandle::silent())
            .await
            .unwrap();
        let codes: Vec<&str> = out.iter().map(|o| o.code.as_str()).collect();
        assert_eq!(codes, ["510300"], "{out:?}");
        assert!(
            matches!(out[0].status, InstrumentSyncStatus::Updated { .. }),
            "{out:?}"
        );
        // the listed stock is the whole market's to fetch, the sold-out fund nobody's
        let asked = stub.requests();
        assert!(!asked.is_empty());
        assert!(
            asked.iter().all(|r| r.contains("secid=1.510300")),
            "{asked:?}"
        );
    }

    #[test]
    fn a_full_sync_adds_what_the_market_list_leaves_out() {
        let open: BTreeSet<String> = [
            "510300", // fund (ETF): never in the stock list
            "161725", // LOF
            "113050", // convertible bond
            "600519", // listed stock: the whole market fetches it
            "688981", // stock neither listed nor cached
            "204001", // repo: valued at its principal
            "HK0700", // no known kind
        ]
        .into_iter()
        .map(str::to_owned)
        .collect();
        let covered = |c: &str| c == "600519";
        assert_eq!(
            full_sync_extras(&open, covered),
            ["113050", "161725", "510300", "688981"]
        );
        // every stock covered: the funds and bonds alone
        assert_eq!(
            full_sync_extras(&open, |_| true),
            ["113050", "161725", "510300"]
        );
        assert!(full_sync_extras(&BTreeSet::new(), |_| false).is_empty());
    }
}
