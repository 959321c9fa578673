//! Money as integers: amounts and fees in fen (0.01 CNY), prices in millionths of a yuan
//! (an average cost such as 10.123456 survives exactly; a quote has at most 3 decimals).
//! Decimal text is parsed digit by digit, never through `f64`.

/// Millionths of a yuan in one yuan.
pub const E6: i64 = 1_000_000;
/// Millionths of a yuan in one fen.
pub const E6_PER_FEN: i64 = 10_000;

/// `a / b` rounded half away from zero (`b > 0`): the fee schedule's rounding.
pub use wyckoff_engine::fees::div_round;

/// A decimal text such as `12.34`, `-0.5`, `1,234.5` or `¥8.00` in units of 10^-`scale`
/// yuan; `None` when it is not a number or has more decimals than `scale` (a figure is
/// never rounded silently).
pub fn parse_scaled(text: &str, scale: u32) -> Option<i64> {
    let t: String = text
        .trim()
        .trim_start_matches(['¥', '￥'])
        .chars()
        .filter(|c| *c != ',')
        .collect();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(&t)),
    };
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // trailing zeros beyond the scale are harmless ("12.3400000")
    let frac = frac.trim_end_matches('0');
    if frac.len() > scale as usize {
        return None;
    }
    let mut v: i64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    for _ in 0..scale {
        v = v.checked_mul(10)?;
    }
    let mut f: i64 = 0;
    for (i, b) in frac.bytes().enumerate() {
        let digit = i64::from(b - b'0');
        f = f.checked_add(digit.checked_mul(10_i64.checked_pow(scale - 1 - i as u32)?)?)?;
    }
    let v = v.checked_add(f)?;
    Some(if neg { -v } else { v })
}

/// Yuan text → fen (at most 2 decimals).
pub fn parse_fen(text: &str) -> Option<i64> {
    parse_scaled(text, 2)
}

/// Yuan text → millionths (at most 6 decimals).
pub fn parse_price(text: &str) -> Option<i64> {
    parse_scaled(text, 6)
}

/// A price given as a JSON/IPC number (the tool's and the page's `f64`) → millionths.
/// The value a user typed ("12.34") is the nearest `f64`, so rounding at 10^-6 recovers it.
pub fn price_from_f64(p: f64) -> Option<i64> {
    (p.is_finite() && p > 0.0 && p < 1e9).then(|| (p * E6 as f64).round() as i64)
}

/// Fen from an `f64` yuan amount (user input only; never accumulated).
pub fn fen_from_f64(x: f64) -> Option<i64> {
    (x.is_finite() && x.abs() < 1e13).then(|| (x * 100.0).round() as i64)
}

/// Fen → yuan for display and IPC (`12345` → 123.45); exact for any sum a person holds.
pub fn yuan(fen: i64) -> f64 {
    fen as f64 / 100.0
}

/// Millionths → yuan (`10123456` → 10.123456).
pub fn price_f64(e6: i64) -> f64 {
    e6 as f64 / E6 as f64
}

/// `12345` → `"123.45"`, `-5` → `"-0.05"`.
pub fn fmt_fen(fen: i64) -> String {
    let sign = if fen < 0 { "-" } else { "" };
    let a = fen.unsigned_abs();
    format!("{sign}{}.{:02}", a / 100, a % 100)
}

/// A price with 2 to 6 decimals, trailing zeros dropped past the second.
pub fn fmt_price(e6: i64) -> String {
    let sign = if e6 < 0 { "-" } else { "" };
    let a = e6.unsigned_abs();
    let frac = format!("{:06}", a % E6 as u64);
    let frac = frac.trim_end_matches('0');
    let frac = if frac.len() < 2 {
        format!("{frac:0<2}")
    } else {
        frac.to_string()
    };
    format!("{sign}{}.{frac}", a / E6 as u64)
}

/// The traded amount in fen: price × shares rounded to the fen (what brokers print).
pub fn amount_fen(price_e6: i64, shares: i64) -> i64 {
    div_round(
        i128::from(price_e6) * i128::from(shares),
        i128::from(E6_PER_FEN),
    ) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_decimal_text_exactly() {
        for (text, scale, want) in [
            ("12.34", 2, Some(1234)),
            ("12.3", 2, Some(1230)),
            ("12", 2, Some(1200)),
            ("-0.05", 2, Some(-5)),
            ("1,234.50", 2, Some(123_450)),
            ("¥8.00", 2, Some(800)),
            (".5", 2, Some(50)),
            ("12.345", 2, None),
            ("12.3400000", 2, Some(1234)),
            ("abc", 2, None),
            ("", 2, None),
            ("1.2.3", 2, None),
            ("10.123456", 6, Some(10_123_456)),
            ("10.1234567", 6, None),
        ] {
            assert_eq!(parse_scaled(text, scale), want, "{text}");
        }
    }

    #[test]
    fn formats() {
        assert_eq!(fmt_fen(12345), "123.45");
        assert_eq!(fmt_fen(-5), "-0.05");
        assert_eq!(fmt_price(10_120_000), "10.12");
        assert_eq!(fmt_price(10_000_000), "10.00");
        assert_eq!(fmt_price(10_123_400), "10.1234");
        assert_eq!(fmt_price(3_456_000), "3.456");
    }

    #[test]
    fn amounts_round_to_the_fen() {
        // 10.12 × 100 = 1012.00
        assert_eq!(amount_fen(10_120_000, 100), 101_200);
        // ETF 1.234 × 1050 = 1295.70
        assert_eq!(amount_fen(1_234_000, 1050), 129_570);
        // 1.2345 × 3 = 3.7035 → 3.70
        assert_eq!(amount_fen(1_234_500, 3), 370);
        // 1.235 × 1 = 1.235 → 1.24 (half up)
        assert_eq!(amount_fen(1_235_000, 1), 124);
        assert_eq!(price_from_f64(12.34), Some(12_340_000));
        assert_eq!(price_from_f64(0.0), None);
    }
}
