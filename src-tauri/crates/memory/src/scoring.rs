//! Recall scoring (seed 记忆召回, DESIGN decisions): pure functions.
//!
//! Each candidate memory carries up to three signals: an FTS hit (the index matched some
//! of the message's terms), an exact stock-code hit, and a keyword hit (one of the
//! message's ≤5 Chinese bigram keywords occurs in the content). Combination: the
//! **maximum** of `1.0 × fts_relevance`, `0.85` (code) and `0.6` (keyword), where
//! `fts_relevance` is the memory's term coverage relative to the best FTS hit of this
//! query (best = 1.0). The max keeps scores in [0, 1] and means one strong reason to
//! recall is enough, while coverage still orders memories that match more of the
//! message. The score is then multiplied by `2^(−age_days / 30)`; preferences never
//! decay.
//!
//! Why coverage and not bm25: FTS5's bm25 needs each term's document frequency, which it
//! gets by reading the term's whole doclist — for a common bigram such as 板块 that is
//! most of the index (hundreds of ms at 100 000 memories, measured). Coverage is computed
//! in Rust on the few candidates the index returns.

use std::cmp::Ordering;

use chrono::{DateTime, Utc};

use crate::MemoryType;

pub const FTS_WEIGHT: f64 = 1.0;
pub const CODE_WEIGHT: f64 = 0.85;
pub const KEYWORD_WEIGHT: f64 = 0.6;
pub const HALF_LIFE_DAYS: f64 = 30.0;

/// Why a memory was recalled.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Signals {
    /// Relative FTS relevance in (0, 1], when the FTS query hit this memory.
    pub fts: Option<f64>,
    pub code: bool,
    pub keyword: bool,
}

impl Signals {
    pub fn any(&self) -> bool {
        self.fts.is_some() || self.code || self.keyword
    }
}

/// Converts FTS term coverage (the share of the message's terms a memory contains, in
/// [0, 1]) into relevance relative to the best candidate: best → 1.0, others → c / best.
/// Degenerate input (no positive coverage) → 1.0 for every hit.
pub fn fts_relevance(coverage: &[f64]) -> Vec<f64> {
    let best = coverage
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max);
    coverage
        .iter()
        .map(|&v| {
            if best > 0.0 && v.is_finite() {
                (v / best).clamp(0.0, 1.0)
            } else {
                1.0
            }
        })
        .collect()
}

/// Share of `terms` present in `tokens` (0 when there are no terms).
pub fn coverage(terms: &[String], tokens: &std::collections::HashSet<String>) -> f64 {
    if terms.is_empty() {
        return 0.0;
    }
    let hit = terms.iter().filter(|t| tokens.contains(*t)).count();
    hit as f64 / terms.len() as f64
}

/// Relevance before decay: the max of the weighted signals (0 when none).
pub fn base_score(s: &Signals) -> f64 {
    let fts = s.fts.map_or(0.0, |r| FTS_WEIGHT * r.clamp(0.0, 1.0));
    let code = if s.code { CODE_WEIGHT } else { 0.0 };
    let keyword = if s.keyword { KEYWORD_WEIGHT } else { 0.0 };
    fts.max(code).max(keyword)
}

/// `2^(−days/30)`; 1.0 for preferences and for timestamps in the future.
pub fn decay(memory_type: MemoryType, created_at: DateTime<Utc>, now: DateTime<Utc>) -> f64 {
    if memory_type == MemoryType::Preference {
        return 1.0;
    }
    let days = (now - created_at).num_milliseconds() as f64 / 86_400_000.0;
    if days <= 0.0 {
        1.0
    } else {
        (-days / HALF_LIFE_DAYS).exp2()
    }
}

pub fn score(
    s: &Signals,
    memory_type: MemoryType,
    created_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> f64 {
    base_score(s) * decay(memory_type, created_at, now)
}

/// A memory with its final score, for ranking.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    pub id: i64,
    pub score: f64,
    pub created_at: DateTime<Utc>,
}

/// Orders by score (high first), then newer first, then higher id; keeps `limit`.
pub fn rank(mut items: Vec<Ranked>, limit: usize) -> Vec<Ranked> {
    items.sort_by(|a, b| {
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(Ordering::Equal)
            .then(b.created_at.cmp(&a.created_at))
            .then(b.id.cmp(&a.id))
    });
    items.truncate(limit);
    items
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Duration, TimeZone};

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 5, 1, 0, 0, 0).unwrap()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn base_score_table() {
        let table = [
            (Signals::default(), 0.0),
            (
                Signals {
                    fts: Some(1.0),
                    ..Default::default()
                },
                1.0,
            ),
            (
                Signals {
                    fts: Some(0.5),
                    ..Default::default()
                },
                0.5,
            ),
            (
                Signals {
                    code: true,
                    ..Default::default()
                },
                0.85,
            ),
            (
                Signals {
                    keyword: true,
                    ..Default::default()
                },
                0.6,
            ),
            (
                Signals {
                    fts: Some(0.5),
                    code: true,
                    keyword: true,
                },
                0.85,
            ),
            (
                Signals {
                    fts: Some(0.9),
                    code: true,
                    keyword: true,
                },
                0.9,
            ),
            (
                Signals {
                    fts: Some(0.3),
                    code: false,
                    keyword: true,
                },
                0.6,
            ),
        ];
        for (s, want) in table {
            assert!(
                close(base_score(&s), want),
                "{s:?}: {} != {want}",
                base_score(&s)
            );
        }
    }

    #[test]
    fn decay_table() {
        let table = [
            (MemoryType::Session, 0, 1.0),
            (MemoryType::Session, 30, 0.5),
            (MemoryType::Decision, 60, 0.25),
            (MemoryType::StockOpinion, 90, 0.125),
            (MemoryType::MarketView, 15, 0.5_f64.sqrt()),
            (MemoryType::Preference, 365, 1.0),
            (MemoryType::Session, -3, 1.0),
        ];
        for (t, days, want) in table {
            let created = now() - Duration::days(days);
            assert!(close(decay(t, created, now()), want), "{t} {days}d");
        }
    }

    #[test]
    fn fts_relevance_is_relative_to_best() {
        let r = fts_relevance(&[1.0 / 3.0, 2.0 / 3.0, 1.0 / 6.0]);
        assert!(
            close(r[0], 0.5) && close(r[1], 1.0) && close(r[2], 0.25),
            "{r:?}"
        );
        assert_eq!(fts_relevance(&[0.0, 0.0]), vec![1.0, 1.0]);
        assert_eq!(fts_relevance(&[]), Vec::<f64>::new());
    }

    #[test]
    fn coverage_counts_terms_present() {
        let tokens: std::collections::HashSet<String> = ["茅台", "600519", "吸筹"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let terms = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(close(coverage(&terms(&["茅台", "白酒"]), &tokens), 0.5));
        assert!(close(
            coverage(&terms(&["600519", "吸筹", "茅台"]), &tokens),
            1.0
        ));
        assert!(close(coverage(&terms(&["白酒"]), &tokens), 0.0));
        assert!(close(coverage(&[], &tokens), 0.0));
    }

    #[test]
    fn ranking_table_fresh_keyword_beats_stale_fts() {
        // (id, signals, type, age days) → expected order
        let cases = [
            (
                1,
                Signals {
                    fts: Some(1.0),
                    ..Default::default()
                },
                MemoryType::Session,
                60,
            ), // 0.25
            (
                2,
                Signals {
                    keyword: true,
                    ..Default::default()
                },
                MemoryType::Session,
                0,
            ), // 0.6
            (
                3,
                Signals {
                    code: true,
                    ..Default::default()
                },
                MemoryType::StockOpinion,
                10,
            ), // 0.675
            (
                4,
                Signals {
                    fts: Some(0.5),
                    ..Default::default()
                },
                MemoryType::Decision,
                0,
            ), // 0.5
            (
                5,
                Signals {
                    keyword: true,
                    ..Default::default()
                },
                MemoryType::Session,
                0,
            ), // 0.6, newer id
        ];
        let items = cases
            .iter()
            .map(|(id, s, t, days)| {
                let created = now() - Duration::days(*days);
                Ranked {
                    id: *id,
                    score: score(s, *t, created, now()),
                    created_at: created,
                }
            })
            .collect();
        let ids: Vec<i64> = rank(items, 4).into_iter().map(|r| r.id).collect();
        assert_eq!(ids, vec![3, 5, 2, 4]);
    }
}
