//! Name search over the stock list: code, name substring, pinyin initials and full pinyin.
//! Pinyin readings are computed on the first search that needs them (no network).

use pinyin::ToPinyinMulti;
use serde::Serialize;

use crate::meta::StockInfo;

/// Per-character readings, lower-case toneless pinyin; all readings of a polyphone
/// (行 is both xing and hang, and 平安银行 must match "payh").
#[derive(Debug, Clone)]
struct Readings(Vec<Vec<String>>);

impl Readings {
    fn of(name: &str) -> Self {
        let mut out = Vec::new();
        for (ch, multi) in name.chars().zip(name.to_pinyin_multi()) {
            let mut r: Vec<String> = match multi {
                Some(m) => m.into_iter().map(|p| p.plain().to_string()).collect(),
                None if ch.is_ascii_alphanumeric() => vec![ch.to_ascii_lowercase().to_string()],
                None => continue,
            };
            r.dedup();
            out.push(r);
        }
        Self(out)
    }

    /// True when `q` (ascii lower-case) matches a run of consecutive characters, each
    /// spelled either in full or by its initial; the last may be a prefix ("pinga").
    fn matches(&self, q: &str) -> bool {
        let q = q.as_bytes();
        (0..self.0.len()).any(|start| self.match_from(start, q))
    }

    fn match_from(&self, i: usize, q: &[u8]) -> bool {
        if q.is_empty() {
            return true;
        }
        let Some(readings) = self.0.get(i) else {
            return false;
        };
        readings.iter().any(|r| {
            let r = r.as_bytes();
            if q.len() <= r.len() && r.starts_with(q) {
                return true; // the query ends inside this syllable
            }
            (q.len() > r.len() && q.starts_with(r) && self.match_from(i + 1, &q[r.len()..]))
                || (!r.is_empty() && q[0] == r[0] && self.match_from(i + 1, &q[1..]))
        })
    }
}

#[derive(Debug, Clone)]
struct Entry {
    info: StockInfo,
    /// Spelled out on the first pinyin search, not on every open (thousands of names
    /// cost milliseconds that a command which never searches should not pay).
    readings: std::sync::OnceLock<Readings>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SearchHit {
    pub code: String,
    pub name: String,
    pub exchange: String,
    pub board: String,
    /// How it matched: code, name or pinyin.
    pub matched: &'static str,
}

/// The searchable stock list.
#[derive(Debug, Clone, Default)]
pub struct StockDirectory {
    entries: Vec<Entry>,
    /// digits → index into `entries`, for O(1) name lookups on every bar read.
    by_code: std::collections::HashMap<String, usize>,
}

impl StockDirectory {
    pub fn new(list: Vec<StockInfo>) -> Self {
        let entries = list
            .into_iter()
            .map(|info| Entry {
                readings: std::sync::OnceLock::new(),
                info,
            })
            .collect::<Vec<Entry>>();
        let by_code = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.info.code.digits().to_string(), i))
            .collect();
        Self { entries, by_code }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn all(&self) -> Vec<StockInfo> {
        self.entries.iter().map(|e| e.info.clone()).collect()
    }

    pub fn get(&self, digits: &str) -> Option<&StockInfo> {
        self.by_code
            .get(digits)
            .and_then(|i| self.entries.get(*i))
            .map(|e| &e.info)
    }

    /// Best matches first: exact code, code prefix/substring, exact name, name substring,
    /// then pinyin. At most `limit` hits.
    pub fn search(&self, keyword: &str, limit: usize) -> Vec<SearchHit> {
        let kw = crate::meta::clean_name(keyword);
        if kw.is_empty() || limit == 0 {
            return Vec::new();
        }
        // "sh600519" / "600519.SH" search like their digits
        let code_kw = crate::code::StockCode::parse(&kw)
            .map(|c| c.digits().to_string())
            .unwrap_or_else(|_| kw.clone());
        let lower = kw.to_lowercase();
        let ascii = lower.bytes().all(|b| b.is_ascii_alphanumeric());
        let mut scored: Vec<(u8, usize, &Entry)> = Vec::new();
        for (i, e) in self.entries.iter().enumerate() {
            let digits = e.info.code.digits();
            let score = if digits == code_kw {
                Some(0)
            } else if e.info.name == kw {
                Some(1)
            } else if digits.starts_with(&code_kw) {
                Some(2)
            } else if e.info.name.to_lowercase().contains(&lower) {
                Some(3)
            } else if code_kw.len() >= 3 && digits.contains(&code_kw) {
                Some(4)
            } else if ascii
                && lower.bytes().any(|b| b.is_ascii_alphabetic())
                && e.readings
                    .get_or_init(|| Readings::of(&e.info.name))
                    .matches(&lower)
            {
                Some(5)
            } else {
                None
            };
            if let Some(s) = score {
                scored.push((s, i, e));
            }
        }
        scored.sort_by_key(|(s, i, _)| (*s, *i));
        scored
            .into_iter()
            .take(limit)
            .map(|(s, _, e)| SearchHit {
                code: e.info.code.digits().to_string(),
                name: e.info.name.clone(),
                exchange: e.info.code.exchange().to_string(),
                board: e.info.board.as_str().to_string(),
                matched: match s {
                    0 | 2 | 4 => "code",
                    1 | 3 => "name",
                    _ => "pinyin",
                },
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> StockDirectory {
        StockDirectory::new(crate::bundled::stock_list().unwrap())
    }

    #[test]
    fn pinyin_initials_and_full_find_ping_an_bank() {
        let d = dir();
        for q in [
            "payh",
            "pingan",
            "PAYH",
            "pinganyinhang",
            "pingany",
            "pinganyh",
        ] {
            let hits = d.search(q, 10);
            assert!(
                hits.iter()
                    .any(|h| h.code == "000001" && h.name == "平安银行"),
                "{q}: {hits:?}"
            );
        }
        let hits = d.search("pingan", 10);
        assert!(hits.iter().any(|h| h.code == "601318"), "{hits:?}");
        assert!(hits.iter().all(|h| h.matched == "pinyin"));
    }

    #[test]
    fn name_and_code_substring() {
        let d = dir();
        let hits = d.search("茅台", 10);
        assert_eq!(hits[0].code, "600519");
        assert_eq!(hits[0].matched, "name");
        let hits = d.search("600519", 10);
        assert_eq!(hits[0].name, "贵州茅台");
        assert_eq!(hits[0].matched, "code");
        assert_eq!(d.search("sh600519", 10)[0].code, "600519");
        let hits = d.search("平安", 10);
        assert!(hits.iter().any(|h| h.code == "000001"));
        assert!(hits.iter().all(|h| h.name.contains("平安")));
        assert!(d.search("万科A", 3).iter().any(|h| h.code == "000002"));
    }

    #[test]
    fn exact_code_ranks_first_and_limit_holds() {
        let d = dir();
        let hits = d.search("000001", 5);
        assert_eq!(hits[0].code, "000001");
        assert!(hits.len() <= 5);
        assert_eq!(d.search("6", 10).len(), 10);
        assert!(d.search("zzzzqqqq", 10).is_empty());
        assert!(d.search("", 10).is_empty());
    }

    #[test]
    fn readings_are_strict_about_order() {
        let r = Readings::of("平安银行");
        assert!(r.matches("yh"));
        assert!(r.matches("yinhang"));
        assert!(!r.matches("hy"));
        assert!(!r.matches("payhx"));
    }
}
