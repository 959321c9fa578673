//! Doom-loop detection (seed 防死循环): the model calling the same tool with the same
//! (or nearly the same) arguments again and again.

use std::collections::{HashSet, VecDeque};

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Calls remembered, across tools.
pub const WINDOW: usize = 6;
/// Repeats within the window that count as a loop.
pub const THRESHOLD: usize = 3;
/// 3-gram Jaccard similarity at which two argument texts count as the same.
pub const SIMILARITY: f64 = 0.8;
/// Argument texts shorter than this are only compared exactly (short texts share too
/// few 3-grams for similarity to mean anything).
pub const FUZZY_MIN_CHARS: usize = 50;
/// Polling tools are expected to repeat.
pub const EXEMPT: &[&str] = &["check_background_tasks"];

/// Canonical JSON text of the arguments: keys sorted at every level, so key order does
/// not hide a repeat.
pub fn canonical_args(args: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                let mut out = serde_json::Map::new();
                for k in keys {
                    out.insert(k.clone(), sorted(&map[k]));
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(args).to_string()
}

fn trigrams(s: &str) -> HashSet<&str> {
    let idx: Vec<usize> = s.char_indices().map(|(i, _)| i).chain([s.len()]).collect();
    let n = idx.len() - 1;
    if n < 3 {
        return [s].into_iter().collect();
    }
    (0..=n - 3).map(|i| &s[idx[i]..idx[i + 3]]).collect()
}

/// Character 3-gram Jaccard similarity.
pub fn jaccard3(a: &str, b: &str) -> f64 {
    let (x, y) = (trigrams(a), trigrams(b));
    let inter = x.intersection(&y).count();
    let union = x.len() + y.len() - inter;
    if union == 0 {
        1.0
    } else {
        inter as f64 / union as f64
    }
}

#[derive(Debug, Clone)]
struct Entry {
    name: String,
    hash: [u8; 32],
    text: String,
}

/// Remembers the last calls of a turn and says when a new one closes a loop.
#[derive(Debug, Default, Clone)]
pub struct DoomLoopDetector {
    recent: VecDeque<Entry>,
}

impl DoomLoopDetector {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records the call and returns the reason when it makes a loop.
    pub fn record(&mut self, name: &str, args: &Value) -> Option<String> {
        if EXEMPT.contains(&name) {
            return None;
        }
        let text = canonical_args(args);
        let hash: [u8; 32] = Sha256::digest(text.as_bytes()).into();
        self.recent.push_back(Entry {
            name: name.to_owned(),
            hash,
            text,
        });
        while self.recent.len() > WINDOW {
            self.recent.pop_front();
        }
        let current = self.recent.back()?;
        let exact = self
            .recent
            .iter()
            .filter(|e| e.name == current.name && e.hash == current.hash)
            .count();
        if exact >= THRESHOLD {
            return Some(format!(
                "doom-loop: 工具 {name} 以相同参数在最近 {WINDOW} 次调用中被调用了 {exact} 次，已中止"
            ));
        }
        if current.text.chars().count() >= FUZZY_MIN_CHARS {
            let similar = self
                .recent
                .iter()
                .filter(|e| {
                    e.name == current.name && jaccard3(&e.text, &current.text) >= SIMILARITY
                })
                .count();
            if similar >= THRESHOLD {
                return Some(format!(
                    "doom-loop: 工具 {name} 以几乎相同的参数在最近 {WINDOW} 次调用中被调用了 {similar} 次，已中止"
                ));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(calls: &[(&str, Value)]) -> Vec<bool> {
        let mut d = DoomLoopDetector::new();
        calls
            .iter()
            .map(|(n, a)| d.record(n, a).is_some())
            .collect()
    }

    #[test]
    fn table() {
        let long = |i: u32| json!({"query": format!("请分析宁德时代近期的量价结构与威科夫阶段位置，重点看成交量变化和主力资金动向，以及支撑阻力 {i}")});
        let a = json!({"code": "600519"});
        let b = json!({"code": "000001"});
        type Case<'a> = (&'a str, Vec<(&'a str, Value)>, Vec<bool>);
        let cases: Vec<Case> = vec![
            (
                "two repeats are fine",
                vec![("analyze_stock", a.clone()), ("analyze_stock", a.clone())],
                vec![false, false],
            ),
            (
                "third identical call trips",
                vec![
                    ("analyze_stock", a.clone()),
                    ("analyze_stock", a.clone()),
                    ("analyze_stock", a.clone()),
                ],
                vec![false, false, true],
            ),
            (
                "key order does not matter",
                vec![
                    ("t", json!({"x": 1, "y": 2})),
                    ("t", json!({"y": 2, "x": 1})),
                    ("t", json!({"x": 1, "y": 2})),
                ],
                vec![false, false, true],
            ),
            (
                "different args are fine",
                vec![
                    ("analyze_stock", a.clone()),
                    ("analyze_stock", b.clone()),
                    ("analyze_stock", a.clone()),
                ],
                vec![false, false, false],
            ),
            (
                "same args, different tools",
                vec![
                    ("analyze_stock", a.clone()),
                    ("portfolio", a.clone()),
                    ("analyze_stock", a.clone()),
                    ("portfolio", a.clone()),
                ],
                vec![false, false, false, false],
            ),
            (
                "repeats spread beyond the window of 6 are fine",
                vec![
                    ("analyze_stock", a.clone()),
                    ("x", json!({"i": 1})),
                    ("x", json!({"i": 2})),
                    ("x", json!({"i": 3})),
                    ("analyze_stock", a.clone()),
                    ("x", json!({"i": 4})),
                    ("x", json!({"i": 5})),
                    ("analyze_stock", a.clone()),
                ],
                vec![false; 8],
            ),
            (
                "repeats within the window trip",
                vec![
                    ("analyze_stock", a.clone()),
                    ("x", json!({"i": 1})),
                    ("analyze_stock", a.clone()),
                    ("x", json!({"i": 2})),
                    ("analyze_stock", a.clone()),
                ],
                vec![false, false, false, false, true],
            ),
            (
                "near-identical long args trip",
                vec![
                    ("browser_research", long(1)),
                    ("browser_research", long(2)),
                    ("browser_research", long(3)),
                ],
                vec![false, false, true],
            ),
            (
                "near-identical short args do not (fuzzy needs 50 chars)",
                vec![
                    ("t", json!({"q": "abc1"})),
                    ("t", json!({"q": "abc2"})),
                    ("t", json!({"q": "abc3"})),
                ],
                vec![false, false, false],
            ),
            (
                "check_background_tasks is exempt",
                vec![
                    ("check_background_tasks", json!({})),
                    ("check_background_tasks", json!({})),
                    ("check_background_tasks", json!({})),
                    ("check_background_tasks", json!({})),
                ],
                vec![false; 4],
            ),
        ];
        for (name, calls, want) in cases {
            assert_eq!(run(&calls), want, "{name}");
        }
    }

    #[test]
    fn jaccard_basics() {
        assert_eq!(jaccard3("abcdef", "abcdef"), 1.0);
        assert_eq!(jaccard3("abc", "xyz"), 0.0);
        assert!(jaccard3("宁德时代量价结构", "宁德时代量价结果") > 0.5);
    }
}
