//! Eastmoney daily bars of exchange-traded funds (ETF / LOF) and listed bonds: the same
//! `push2his` kline endpoint as stocks, under the fund's or bond's `secid` (`1.510300`,
//! `0.159915`, `1.113050`, `0.127050`), unadjusted (`fqt=0`) — a ledger values a holding
//! at the price it really traded at, and a fund's or bond's close is that price.

use std::time::Duration;

use serde_json::Value;

use super::eastmoney::{DEFAULT_KLINE_BASE, parse_klines};
use super::http::{DEFAULT_TIMEOUT, client, send_json, url_with};
use super::{Adjust, BarRequest, Fetched, SourceError};
use crate::code::{Exchange, Symbol, SymbolKind, fund_or_bond_exchange};

/// The stored name of the bars this source gives.
pub const SOURCE_NAME: &str = "eastmoney";

/// Eastmoney's `secid` of a fund or bond code (`None` for a code whose exchange its digits
/// do not settle, a stock or a repo).
pub fn fund_secid(digits: &str) -> Option<String> {
    fund_or_bond_exchange(digits).map(|ex| format!("{}.{digits}", ex.eastmoney_market()))
}

/// The fund and bond kline fetcher.
#[derive(Debug, Clone)]
pub struct EastmoneyFund {
    kline_base: String,
    client: reqwest::Client,
    /// Pause between two codes' requests (the pace the daily sync keeps with Eastmoney).
    pub interval: Duration,
}

impl EastmoneyFund {
    pub fn new(kline_base: &str) -> Self {
        Self {
            kline_base: kline_base.trim_end_matches('/').to_owned(),
            client: client(DEFAULT_TIMEOUT),
            interval: Duration::ZERO,
        }
    }

    /// Eastmoney at `WYCKOFF_EASTMONEY_URL` when set (a mirror, or a local server in
    /// tests), else its public host; one request a second.
    pub fn from_env() -> Self {
        let base = std::env::var("WYCKOFF_EASTMONEY_URL")
            .ok()
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| DEFAULT_KLINE_BASE.to_owned());
        let mut s = Self::new(&base);
        s.interval = Duration::from_secs(1);
        s
    }

    /// The unadjusted daily bars of `digits`, listed on `exchange`, over `start..=end`
    /// (`YYYYMMDD`; see [`crate::instrument_bars::instrument_exchange`] for the exchange).
    pub async fn daily_bars(
        &self,
        digits: &str,
        exchange: Exchange,
        start: u32,
        end: u32,
    ) -> Result<Fetched, SourceError> {
        let req = BarRequest {
            symbol: Symbol {
                digits: digits.to_owned(),
                exchange,
                kind: SymbolKind::Stock,
            },
            start,
            end,
            adjust: Adjust::None,
        };
        let secid = req.symbol.eastmoney_secid();
        let (beg, end) = (start.to_string(), end.to_string());
        let u = url_with(
            &format!("{}/api/qt/stock/kline/get", self.kline_base),
            &[
                ("secid", secid.as_str()),
                ("fields1", "f1,f2,f3,f4,f5,f6"),
                ("fields2", "f51,f52,f53,f54,f55,f56,f57,f58,f59,f60,f61"),
                ("klt", "101"),
                ("fqt", "0"),
                ("beg", &beg),
                ("end", &end),
            ],
        )?;
        let v: Value = send_json(self.client.get(u)).await?;
        parse_klines(&v, &req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secids_of_funds_and_bonds() {
        for (code, want) in [
            ("510300", Some("1.510300")),
            ("159915", Some("0.159915")),
            ("161725", Some("0.161725")),
            ("113050", Some("1.113050")),
            ("123001", Some("0.123001")),
            ("127050", Some("0.127050")),
            ("128136", Some("0.128136")),
            ("204001", None),
            ("600519", None),
        ] {
            assert_eq!(fund_secid(code).as_deref(), want, "{code}");
        }
    }
}
