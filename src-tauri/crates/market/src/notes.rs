//! What a data read must tell the user, as data: the code and its figures. The CLI and
//! the model read the English text ([`std::fmt::Display`]); the app words each note in
//! the user's language from the same fields.

use serde::Serialize;
use specta::Type;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DataNote {
    /// The code is not in the cached stock list.
    NotInStockList {
        code: String,
    },
    MarketCapUnavailable,
    IndustryUnavailable,
    ListingDateUnknown,
    /// Nothing on or before the as-of date; the cache starts later.
    NoBarsBefore {
        code: String,
        as_of: String,
        first_cached: String,
    },
    /// No bars at all offline.
    NoDataOffline {
        code: String,
    },
    /// The bundled data has no index bars.
    IndexUnavailableOffline {
        index: String,
    },
    TurnoverUnavailable,
    /// A live refresh was tried and failed; the cache was used.
    RefreshFailed {
        error: String,
    },
    CorruptRowsSkipped {
        count: u32,
    },
    AmountMissing {
        count: u32,
    },
    /// The stock was delisted: its series ends at its last trading day, complete.
    Delisted {
        code: String,
        last_day: String,
    },
    /// Some bars were imported from TDX, which keeps real traded prices: they are not
    /// forward-adjusted until a sync of the code replaces them.
    Unadjusted {
        code: String,
    },
    /// The last bar is older than the last closed trading day.
    Stale {
        code: String,
        last_bar: String,
        expected: String,
    },
}

impl std::fmt::Display for DataNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DataNote::NotInStockList { code } => write!(
                f,
                "{code} is not in the cached stock list; run `wyckoff data sync --list` when online"
            ),
            DataNote::MarketCapUnavailable => {
                f.write_str("market cap unavailable (not in the cached list; not invented)")
            }
            DataNote::IndustryUnavailable => f.write_str("industry unavailable"),
            DataNote::ListingDateUnknown => f.write_str("listing date unknown"),
            DataNote::NoBarsBefore {
                code,
                as_of,
                first_cached,
            } => write!(
                f,
                "no bars on or before {as_of}; cached data for {code} starts {first_cached}"
            ),
            DataNote::NoDataOffline { code } => write!(
                f,
                "no data offline for {code}; run `wyckoff data sync {code}` when online"
            ),
            DataNote::IndexUnavailableOffline { index } => write!(
                f,
                "index data unavailable offline for {index}; the bundled data has no index bars; \
                 run `wyckoff data sync --index {index}` when online"
            ),
            DataNote::TurnoverUnavailable => {
                f.write_str("turnover rate unavailable from this source (not invented)")
            }
            DataNote::RefreshFailed { error } => {
                write!(f, "live refresh failed, using cache: {error}")
            }
            DataNote::CorruptRowsSkipped { count } => write!(
                f,
                "{count} corrupt cached row(s) skipped (see corrupt_rows); re-sync to repair"
            ),
            DataNote::AmountMissing { count } => write!(
                f,
                "{count} bar(s) have no traded amount from their source; amount is 0 there, not estimated"
            ),
            DataNote::Unadjusted { code } => write!(
                f,
                "bars imported from TDX are unadjusted (real traded prices, not forward-adjusted) until `wyckoff data sync {code}` brings the adjusted history"
            ),
            DataNote::Stale {
                code,
                last_bar,
                expected,
            } => write!(
                f,
                "data is stale: last bar {last_bar} but the last closed trading day is {expected}; \
                 run `wyckoff data sync {code}` when online"
            ),
            DataNote::Delisted { code, last_day } => write!(
                f,
                "{code} was delisted; its bars end on {last_day}, its last trading day"
            ),
        }
    }
}

/// The notes as the text the model and the CLI read.
pub fn texts(notes: &[DataNote]) -> Vec<String> {
    notes.iter().map(ToString::to_string).collect()
}
