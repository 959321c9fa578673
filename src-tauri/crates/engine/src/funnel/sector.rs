//! L3 sector resonance over industries (REFERENCE §15.1 L3). Concepts and hot-concept lists
//! are not in the cache, so sectors are industries; when too few L2 survivors have one the
//! layer is skipped and says so.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::indicators::{median, quantile};

use super::strength::percentile_ranks;

/// Stock strength weights: 0.4·pct(ret20) + 0.3·pct(ret5) + 0.3·pct(ret3).
const W20: f64 = 0.4;
const W5: f64 = 0.3;
const W3: f64 = 0.3;
const MIN_SECTOR_COUNT: usize = 3;
const PASS_Q: f64 = 0.70;
const SUPER_Q: f64 = 0.90;
const TOP_SECTORS: usize = 5;
/// A stock in a passing (non-top) sector stays with strength ≥ 0.60; any stock with ≥ 0.80.
const KEEP_IN_SECTOR: f64 = 0.60;
const KEEP_ALONE: f64 = 0.80;
/// Fewer survivors than this → keep all of L2.
const MIN_SURVIVORS: usize = 3;

/// One L2 survivor as L3 sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SectorInput<'a> {
    pub industry: Option<&'a str>,
    pub ret20: Option<f64>,
    pub ret5: Option<f64>,
    pub ret3: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SectorStat {
    pub name: String,
    pub l1_count: usize,
    pub l2_count: usize,
    /// L2 / L1 members.
    pub pass_ratio: f64,
    /// Median member strength, 0..1.
    pub strength: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct L3Outcome {
    /// Per input: kept for L4.
    pub keep: Vec<bool>,
    pub top_sectors: Vec<SectorStat>,
    /// Why the layer did not filter (skipped, or too few survivors), if it did not.
    pub note: Option<String>,
    pub skipped: bool,
}

/// Run L3. `l1_counts` = L1 survivors per industry; `min_coverage` = share of L2 survivors
/// that must have an industry for the layer to run.
pub fn sector_resonance(
    l2: &[SectorInput<'_>],
    l1_counts: &BTreeMap<String, usize>,
    min_coverage: f64,
) -> L3Outcome {
    let all = |note: String, skipped: bool| L3Outcome {
        keep: vec![true; l2.len()],
        top_sectors: Vec::new(),
        note: Some(note),
        skipped,
    };
    let covered = l2.iter().filter(|s| s.industry.is_some()).count();
    if l2.is_empty() {
        return all("L2 无幸存股票".into(), false);
    }
    if (covered as f64) < min_coverage * l2.len() as f64 {
        return all(
            format!(
                "L3 已跳过：仅 {covered}/{} 只 L2 股票有行业数据（需 ≥{:.0}%），L2 全部进入 L4；导入行业：`wyckoff data industries import PATH`（code,industry CSV 或通达信安装目录）",
                l2.len(),
                min_coverage * 100.0
            ),
            true,
        );
    }
    let p20 = percentile_ranks(&l2.iter().map(|s| s.ret20).collect::<Vec<_>>());
    let p5 = percentile_ranks(&l2.iter().map(|s| s.ret5).collect::<Vec<_>>());
    let p3 = percentile_ranks(&l2.iter().map(|s| s.ret3).collect::<Vec<_>>());
    // A missing return ranks at the bottom (0), never as average.
    let strength: Vec<f64> = (0..l2.len())
        .map(|i| {
            (W20 * p20[i].unwrap_or(0.0) + W5 * p5[i].unwrap_or(0.0) + W3 * p3[i].unwrap_or(0.0))
                / 100.0
        })
        .collect();
    let mut members: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (s, st) in l2.iter().zip(&strength) {
        if let Some(ind) = s.industry {
            members.entry(ind).or_default().push(*st);
        }
    }
    let stats: Vec<SectorStat> = members
        .iter()
        .map(|(name, v)| {
            let l1 = l1_counts
                .get(*name)
                .copied()
                .unwrap_or(v.len())
                .max(v.len());
            SectorStat {
                name: (*name).to_string(),
                l1_count: l1,
                l2_count: v.len(),
                pass_ratio: v.len() as f64 / l1 as f64,
                strength: median(v).unwrap_or(0.0),
            }
        })
        .collect();
    let sizes: Vec<f64> = stats.iter().map(|s| s.l2_count as f64).collect();
    let ratios: Vec<f64> = stats.iter().map(|s| s.pass_ratio).collect();
    let strengths: Vec<f64> = stats.iter().map(|s| s.strength).collect();
    let q_size = quantile(&sizes, PASS_Q).unwrap_or(0.0).ceil() as usize;
    let q_ratio = quantile(&ratios, PASS_Q).unwrap_or(0.0);
    let q_str = quantile(&strengths, PASS_Q).unwrap_or(0.0);
    let q_super = quantile(&strengths, SUPER_Q).unwrap_or(0.0);
    let mut keep_sectors: Vec<&SectorStat> = stats
        .iter()
        .filter(|s| {
            let pass = s.l2_count >= MIN_SECTOR_COUNT.max(q_size)
                && s.pass_ratio >= q_ratio
                && s.strength >= q_str;
            let sup = s.l2_count >= MIN_SECTOR_COUNT && s.strength >= q_super;
            pass || sup
        })
        .collect();
    if keep_sectors.is_empty() {
        let max = stats.iter().map(|s| s.l2_count).max().unwrap_or(0);
        keep_sectors = stats.iter().filter(|s| s.l2_count == max).collect();
    }
    keep_sectors.sort_by(|a, b| {
        b.strength
            .total_cmp(&a.strength)
            .then(b.l2_count.cmp(&a.l2_count))
            .then(a.name.cmp(&b.name))
    });
    let top: Vec<SectorStat> = keep_sectors
        .iter()
        .take(TOP_SECTORS)
        .map(|s| (*s).clone())
        .collect();
    let keep: Vec<bool> = l2
        .iter()
        .zip(&strength)
        .map(|(s, &st)| {
            let in_top = s.industry.is_some_and(|i| top.iter().any(|t| t.name == i));
            let in_keep = s
                .industry
                .is_some_and(|i| keep_sectors.iter().any(|t| t.name == i));
            in_top || (in_keep && st >= KEEP_IN_SECTOR) || st >= KEEP_ALONE
        })
        .collect();
    if keep.iter().filter(|k| **k).count() < MIN_SURVIVORS {
        return L3Outcome {
            keep: vec![true; l2.len()],
            top_sectors: top,
            note: Some(format!("L3 幸存不足 {MIN_SURVIVORS} 只，保留全部 L2")),
            skipped: false,
        };
    }
    L3Outcome {
        keep,
        note: Some(format!(
            "L3 行业共振：{covered}/{} 只 L2 股票有行业，共 {} 个行业，前 {} 名 {}",
            l2.len(),
            stats.len(),
            top.len(),
            top.iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join("、")
        )),
        top_sectors: top,
        skipped: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(industry: Option<&str>, r: f64) -> SectorInput<'_> {
        SectorInput {
            industry,
            ret20: Some(r),
            ret5: Some(r),
            ret3: Some(r),
        }
    }

    /// Sector A (5 strong members, all of its L1 stocks), B (4 weak of 10), C (3 middling of
    /// 6), and two stocks without an industry: one the strongest of all, one the weakest.
    fn market() -> (Vec<SectorInput<'static>>, BTreeMap<String, usize>) {
        let mut v = Vec::new();
        for r in [10.0, 11.0, 12.0, 13.0, 14.0] {
            v.push(input(Some("A"), r));
        }
        for r in [1.0, 2.0, 3.0, 4.0] {
            v.push(input(Some("B"), r));
        }
        for r in [5.0, 6.0, 7.0] {
            v.push(input(Some("C"), r));
        }
        v.push(input(None, 15.0));
        v.push(input(None, 0.5));
        let l1 = [("A", 5), ("B", 10), ("C", 6)]
            .into_iter()
            .map(|(k, n)| (k.to_string(), n))
            .collect();
        (v, l1)
    }

    #[test]
    fn the_strong_full_sector_leads_and_a_lone_leader_survives() {
        // By hand: strengths are rank/14; A's median 11/14, B's 3.5/14, C's 7/14. Size q70 of
        // [3,4,5] is 4.4 → ≥ 5 members: only A; A's ratio 1.0 and strength clear the q70s.
        let (v, l1) = market();
        let out = sector_resonance(&v, &l1, 0.5);
        assert!(!out.skipped);
        assert!(
            out.note
                .as_deref()
                .is_some_and(|n| n.starts_with("L3 行业共振：")),
            "{:?}",
            out.note
        );
        let names: Vec<&str> = out.top_sectors.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["A"]);
        let a = &out.top_sectors[0];
        assert_eq!((a.l1_count, a.l2_count), (5, 5));
        assert!((a.strength - 11.0 / 14.0).abs() < 1e-12);
        let mut want = vec![true; 5];
        want.extend([false; 7]);
        want.extend([true, false]);
        assert_eq!(out.keep, want);
    }

    #[test]
    fn too_little_industry_data_skips_the_layer() {
        let (mut v, l1) = market();
        for s in v.iter_mut().take(8) {
            s.industry = None;
        }
        // 4 of 14 have an industry (< 50 %).
        let out = sector_resonance(&v, &l1, 0.5);
        assert!(out.skipped);
        assert!(out.note.as_deref().is_some_and(|n| n.contains("4/14")));
        assert!(out.keep.iter().all(|k| *k));
    }

    #[test]
    fn fewer_than_three_survivors_keep_all() {
        // No sector has 3 members, so the largest (D) is kept; only its two stocks survive
        // (the best other has strength 3/5 < 0.80), fewer than 3: all of L2 goes on.
        let v = vec![
            input(Some("A"), 1.0),
            input(Some("B"), 2.0),
            input(Some("C"), 3.0),
            input(Some("D"), 4.0),
            input(Some("D"), 5.0),
        ];
        let out = sector_resonance(&v, &BTreeMap::new(), 0.5);
        assert_eq!(out.top_sectors.len(), 1);
        assert_eq!(out.top_sectors[0].name, "D");
        assert_eq!(out.keep, vec![true; 5]);
        assert!(out.note.is_some_and(|n| n.contains("保留全部")));
    }
}
