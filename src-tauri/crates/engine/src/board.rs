//! A-share boards, from the 6-digit code (REFERENCE §15.0 `core/cn_boards`), and the rules
//! that go by board: the daily price limit (narrowed for ST names) and the lot. The one
//! prefix table: `wyckoff_market::StockCode` takes its board (and whether a code is a stock
//! at all) from [`Board::of_stock`]; the backtest, forward tracking and position sizing
//! take their limits and lots from here ([`Board::lot_rule`]), and the funnel its ST rule.

use serde::{Deserialize, Serialize};

/// The buy quantities a board accepts: at least `minimum` shares, then multiples of `step`
/// above it. Main board and ChiNext: 100, 200, 300 …; STAR: 200, 201, 202 …; BSE: 100,
/// 101, 102 … (a sale of an odd remainder is allowed anywhere and not modelled here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct LotRule {
    pub minimum: u64,
    pub step: u64,
}

impl LotRule {
    /// The largest valid buy of at most `shares`; 0 when not even the minimum fits.
    pub fn round_down(self, shares: u64) -> u64 {
        if shares < self.minimum {
            return 0;
        }
        let step = self.step.max(1);
        self.minimum + (shares - self.minimum) / step * step
    }

    /// Whether `shares` is a quantity the board accepts for a buy.
    pub fn is_valid(self, shares: u64) -> bool {
        shares >= self.minimum && (shares - self.minimum).is_multiple_of(self.step.max(1))
    }
}

/// ChiNext's limit went from 10 % to 20 % on this day (registration reform).
pub const CHINEXT_20PCT_FROM: u32 = 20200824;

/// ST / *ST / delisting names (REFERENCE §15.1 L1 step 2): the funnel drops them, and their
/// main-board limit is 5 %.
pub fn is_st_name(name: &str) -> bool {
    name.to_uppercase().contains("ST") || name.contains("退")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Board {
    /// Shanghai/Shenzhen main board (incl. the former SME board 002 and B shares).
    Main,
    /// Shenzhen ChiNext 300/301.
    Chinext,
    /// Shanghai STAR market 688/689.
    Star,
    /// Beijing Stock Exchange 4xx/8xx/920.
    Bse,
}

impl Board {
    /// Board of a six-digit stock code; `None` when the prefix is no stock's (funds, bonds,
    /// ETFs, indices) or the text is not six ASCII digits.
    pub fn of_stock(digits: &str) -> Option<Board> {
        if digits.len() != 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        match &digits[..3] {
            "600" | "601" | "603" | "605" | "900" => Some(Board::Main),
            "000" | "001" | "002" | "003" | "004" | "200" | "201" => Some(Board::Main),
            "688" | "689" => Some(Board::Star),
            "300" | "301" => Some(Board::Chinext),
            "920" => Some(Board::Bse),
            p if p.starts_with(['4', '8']) => Some(Board::Bse),
            _ => None,
        }
    }

    /// Board of a code such as `600519`, `300027.SZ` or `sh688001` (digits are what count);
    /// the main board for anything that is not a stock code.
    pub fn from_code(code: &str) -> Board {
        let digits: String = code.chars().filter(|c| c.is_ascii_digit()).collect();
        Board::of_stock(&digits).unwrap_or(Board::Main)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Board::Main => "main",
            Board::Chinext => "chinext",
            Board::Star => "star",
            Board::Bse => "bse",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "main" => Some(Board::Main),
            "chinext" => Some(Board::Chinext),
            "star" => Some(Board::Star),
            "bse" => Some(Board::Bse),
            _ => None,
        }
    }

    /// Daily price limit on `date` as a fraction of the previous close: 10 % main board,
    /// 20 % STAR and ChiNext (10 % for ChiNext before 2020-08-24), 5 % for an ST name on the
    /// main board (and on ChiNext before its reform), 30 % BSE.
    pub fn limit_fraction(self, is_st: bool, date: u32) -> f64 {
        f64::from(self.limit_percent(is_st, date)) / 100.0
    }

    /// [`Board::limit_fraction`] in whole percent (the exchanges' rules are whole percents,
    /// so limit prices can be computed in integer fen).
    pub fn limit_percent(self, is_st: bool, date: u32) -> u32 {
        match self {
            Board::Bse => 30,
            Board::Star => 20,
            Board::Chinext if date >= CHINEXT_20PCT_FROM => 20,
            _ if is_st => 5,
            _ => 10,
        }
    }

    /// How many of a new listing's first trading days trade without the daily limit:
    /// STAR 5 (since it opened, 2019-07-22); ChiNext 5 for listings from 2020-08-24, the
    /// first day before; main board 5 for listings from 2023-04-10 (the first main-board
    /// listings under the registration reform), the first day before; BSE the first day.
    /// A first day under the old rules had a ±44 %/−36 % IPO cap, not the daily limit: it
    /// counts as a day without one.
    pub fn listing_days_without_limit(self, list_date: u32) -> u32 {
        match self {
            Board::Star => 5,
            Board::Chinext if list_date >= CHINEXT_20PCT_FROM => 5,
            Board::Main if list_date >= MAIN_REGISTRATION_FROM => 5,
            _ => 1,
        }
    }

    /// The daily limit in whole percent on `date` for a stock of this board, ST or not
    /// then, on its `listing_day`-th trading day (1 = the listing day; `None` when its
    /// listing is unknown or long past); `None` when no daily limit applies that day.
    pub fn daily_limit(
        self,
        is_st: bool,
        date: u32,
        list_date: Option<u32>,
        listing_day: Option<u32>,
    ) -> Option<u32> {
        match (list_date, listing_day) {
            (Some(listed), Some(n)) if n <= self.listing_days_without_limit(listed) => None,
            _ => Some(self.limit_percent(is_st, date)),
        }
    }
}

/// The first main-board listings under the registration reform, from which a new main-board
/// listing trades its first five days without a limit.
pub const MAIN_REGISTRATION_FROM: u32 = 20230410;

/// A price in yuan → whole fen, half up (as the exchanges round a computed price to the
/// tick); `None` unless positive and finite.
pub fn yuan_to_fen(yuan: f64) -> Option<i64> {
    // the epsilon keeps 10.005 (stored as 10.00499…) rounding up as the exchange would
    (yuan.is_finite() && yuan > 0.0 && yuan < 1e9)
        .then(|| (yuan * 100.0 + 0.5 + 1e-7).floor() as i64)
}

/// The day's limit prices in fen from the previous close (or ex-rights reference price)
/// in fen: `prev × (1 ± percent)`, rounded half up to the fen, as SSE, SZSE and BSE
/// compute them.
pub fn limit_prices_fen(prev_fen: i64, percent: u32) -> (i64, i64) {
    let p = i64::from(percent);
    let up = (prev_fen * (100 + p) + 50).div_euclid(100);
    let down = (prev_fen * (100 - p) + 50).div_euclid(100);
    (up, down)
}

impl Board {
    /// The buy quantities the board accepts: whole 100-share lots on the main board and
    /// ChiNext; at least 200 then any share on STAR; at least 100 then any share on BSE.
    pub fn lot_rule(self) -> LotRule {
        match self {
            Board::Main | Board::Chinext => LotRule {
                minimum: 100,
                step: 100,
            },
            Board::Star => LotRule {
                minimum: 200,
                step: 1,
            },
            Board::Bse => LotRule {
                minimum: 100,
                step: 1,
            },
        }
    }

    /// EVR day-change scale (REFERENCE §15.1 L4 EVR: main 1.0, chinext 1.2, bse 1.2, star 1.4).
    pub fn evr_scale(self) -> f64 {
        match self {
            Board::Main => 1.0,
            Board::Chinext | Board::Bse => 1.2,
            Board::Star => 1.4,
        }
    }
}

/// What a six-digit code on a broker statement is, by its prefix: a stock (board by
/// [`Board::of_stock`]), an exchange fund (ETF/LOF: Shanghai 5xxxxx, Shenzhen 15xxxx and
/// 16xxxx), a bond (10–13xxxx: convertibles 110/113/118/123/127/128, treasuries and
/// corporates), a reverse repo (Shanghai 204xxx, Shenzhen 131xxx) or something else
/// (subscription and rights codes, indices). The one prefix rule for the journal's
/// instruments.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, specta::Type,
)]
#[serde(rename_all = "snake_case")]
pub enum Instrument {
    Stock,
    Fund,
    Bond,
    Repo,
    Other,
}

impl Instrument {
    /// The instrument of a six-digit code (anything else is [`Instrument::Other`]).
    pub fn of_code(digits: &str) -> Instrument {
        if Board::of_stock(digits).is_some() {
            return Instrument::Stock;
        }
        if digits.len() != 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Instrument::Other;
        }
        match (&digits[..2], &digits[..3]) {
            (_, "204" | "131") => Instrument::Repo,
            ("15" | "16", _) => Instrument::Fund,
            (p, _) if p.starts_with('5') => Instrument::Fund,
            ("10" | "11" | "12" | "13", _) => Instrument::Bond,
            _ => Instrument::Other,
        }
    }

    /// Whether holdings of it are valued at a daily close (a repo is cash lent out, valued
    /// at its principal).
    pub fn has_closes(self) -> bool {
        matches!(
            self,
            Instrument::Stock | Instrument::Fund | Instrument::Bond
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boards_of_stock_codes() {
        let cases = [
            ("600519", Some(Board::Main)),
            ("601318", Some(Board::Main)),
            ("603220", Some(Board::Main)),
            ("605001", Some(Board::Main)),
            ("900901", Some(Board::Main)),
            ("000001", Some(Board::Main)),
            ("002572", Some(Board::Main)),
            ("003816", Some(Board::Main)),
            ("004001", Some(Board::Main)),
            ("200002", Some(Board::Main)),
            ("201872", Some(Board::Main)),
            ("300027", Some(Board::Chinext)),
            ("301001", Some(Board::Chinext)),
            ("688981", Some(Board::Star)),
            ("689009", Some(Board::Star)),
            ("430047", Some(Board::Bse)),
            ("830799", Some(Board::Bse)),
            ("873223", Some(Board::Bse)),
            ("920001", Some(Board::Bse)),
            // ETFs, bonds, indices and numbers that are no code
            ("510300", None),
            ("159915", None),
            ("123456", None),
            ("399001", None),
            ("930001", None),
            ("60051", None),
            ("6005190", None),
            ("60051x", None),
            ("", None),
        ];
        for (code, want) in cases {
            assert_eq!(Board::of_stock(code), want, "{code}");
        }
    }

    #[test]
    fn boards_from_codes() {
        assert_eq!(Board::from_code("000001"), Board::Main);
        assert_eq!(Board::from_code("600519.SH"), Board::Main);
        assert_eq!(Board::from_code("300027"), Board::Chinext);
        assert_eq!(Board::from_code("sh688001"), Board::Star);
        assert_eq!(Board::from_code("830799"), Board::Bse);
        assert_eq!(Board::from_code("900901"), Board::Main);
        assert_eq!(Board::from_code("510300"), Board::Main);
    }

    #[test]
    fn limits_by_board_st_and_date() {
        // (board, ST, date, limit)
        let cases = [
            (Board::Main, false, 20220104, 0.10),
            (Board::Main, true, 20220104, 0.05),
            (Board::Chinext, false, 20200821, 0.10),
            (Board::Chinext, true, 20200821, 0.05),
            (Board::Chinext, false, 20200824, 0.20),
            (Board::Chinext, true, 20200824, 0.20),
            (Board::Star, false, 20220104, 0.20),
            (Board::Star, true, 20220104, 0.20),
            (Board::Bse, false, 20220104, 0.30),
            (Board::Bse, true, 20220104, 0.30),
        ];
        for (board, st, date, want) in cases {
            assert_eq!(
                board.limit_fraction(st, date),
                want,
                "{board:?} st={st} {date}"
            );
        }
    }

    #[test]
    fn limit_prices_round_half_up_to_the_fen() {
        // (previous close in fen, percent) → (up, down), by hand
        let cases = [
            (1000, 10, 1100, 900),
            (1005, 10, 1106, 905), // 11.055 → 11.06, 9.045 → 9.05
            (1234, 5, 1296, 1172), // 12.957 → 12.96, 11.723 → 11.72
            (333, 20, 400, 266),   // 3.996 → 4.00, 2.664 → 2.66
            (1015, 30, 1320, 711), // 13.195 → 13.20, 7.105 → 7.11
            (1, 10, 1, 1),         // a one-fen stock cannot move
            (999, 10, 1099, 899),  // 10.989 → 10.99, 8.991 → 8.99
        ];
        for (prev, pct, up, down) in cases {
            assert_eq!(limit_prices_fen(prev, pct), (up, down), "{prev} {pct}%");
        }
        assert_eq!(yuan_to_fen(10.005), Some(1001));
        assert_eq!(yuan_to_fen(10.004), Some(1000));
        assert_eq!(yuan_to_fen(0.0), None);
        assert_eq!(yuan_to_fen(f64::NAN), None);
    }

    #[test]
    fn no_limit_on_a_listings_first_days() {
        // (board, listed, trading day of the listing) → percent
        let cases = [
            (Board::Main, 20230410, 1, None),
            (Board::Main, 20230410, 5, None),
            (Board::Main, 20230410, 6, Some(10)),
            (Board::Main, 20230331, 1, None),
            (Board::Main, 20230331, 2, Some(10)),
            (Board::Chinext, 20200824, 5, None),
            (Board::Chinext, 20200824, 6, Some(20)),
            (Board::Chinext, 20200821, 2, Some(10)),
            (Board::Star, 20190722, 5, None),
            (Board::Star, 20190722, 6, Some(20)),
            (Board::Bse, 20211115, 1, None),
            (Board::Bse, 20211115, 2, Some(30)),
        ];
        for (board, listed, n, want) in cases {
            // the date is the listing day's: ChiNext's limit follows the day, not the listing
            assert_eq!(
                board.daily_limit(false, listed, Some(listed), Some(n)),
                want,
                "{board:?} {listed} day {n}"
            );
        }
        assert_eq!(Board::Main.daily_limit(true, 20230410, None, None), Some(5));
        assert_eq!(Board::Main.limit_percent(true, 20230410), 5);
    }

    #[test]
    fn lots_by_board() {
        // (board, shares wanted) → (the largest valid buy of at most that, is it valid)
        let cases = [
            (Board::Main, 0, 0, false),
            (Board::Main, 99, 0, false),
            (Board::Main, 100, 100, true),
            (Board::Main, 199, 100, false),
            (Board::Main, 200, 200, true),
            (Board::Main, 12_345, 12_300, false),
            (Board::Chinext, 99, 0, false),
            (Board::Chinext, 150, 100, false),
            (Board::Chinext, 300, 300, true),
            // STAR: nothing under 200, then any share
            (Board::Star, 100, 0, false),
            (Board::Star, 199, 0, false),
            (Board::Star, 200, 200, true),
            (Board::Star, 201, 201, true),
            (Board::Star, 2_437, 2_437, true),
            // BSE: nothing under 100, then any share
            (Board::Bse, 99, 0, false),
            (Board::Bse, 100, 100, true),
            (Board::Bse, 101, 101, true),
            (Board::Bse, 1_999, 1_999, true),
        ];
        for (board, shares, down, valid) in cases {
            let rule = board.lot_rule();
            assert_eq!(rule.round_down(shares), down, "{board:?} {shares}");
            assert_eq!(rule.is_valid(shares), valid, "{board:?} {shares}");
            assert!(down == 0 || rule.is_valid(down), "{board:?} {down}");
        }
        assert_eq!(Board::from_code("688981").lot_rule().minimum, 200);
        assert_eq!(Board::from_code("830799").lot_rule().step, 1);
    }

    #[test]
    fn st_names() {
        let cases = [
            ("ST康美", true),
            ("*ST海润", true),
            ("*ST 海润", true),
            ("st 测试", true),
            ("退市海润", true),
            ("退市美都", true),
            ("平安银行", false),
            ("贵州茅台", false),
            ("", false),
        ];
        for (name, want) in cases {
            assert_eq!(is_st_name(name), want, "{name}");
        }
    }

    #[test]
    fn names_round_trip() {
        for b in [Board::Main, Board::Chinext, Board::Star, Board::Bse] {
            assert_eq!(Board::parse(b.as_str()), Some(b));
        }
        assert_eq!(Board::parse("nasdaq"), None);
    }

    #[test]
    fn instruments_by_code() {
        let cases = [
            ("600519", Instrument::Stock),
            ("300027", Instrument::Stock),
            ("830799", Instrument::Stock),
            ("510300", Instrument::Fund),
            ("588000", Instrument::Fund),
            ("159915", Instrument::Fund),
            ("161725", Instrument::Fund),
            ("113050", Instrument::Bond),
            ("110059", Instrument::Bond),
            ("123456", Instrument::Bond),
            ("128136", Instrument::Bond),
            ("019547", Instrument::Other),
            ("204001", Instrument::Repo),
            ("131810", Instrument::Repo),
            ("732001", Instrument::Other),
            ("080002", Instrument::Other),
            ("399001", Instrument::Other),
            ("60051", Instrument::Other),
            ("", Instrument::Other),
        ];
        for (code, want) in cases {
            assert_eq!(Instrument::of_code(code), want, "{code}");
        }
    }
}
