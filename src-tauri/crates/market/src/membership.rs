//! One stock's memberships as of a day: its industry (from the load that day reads, a dated
//! Shenwan span when there is one) and the concept and style blocks it is in (from the
//! latest block load on or before the day, else the nearest later one, flagged).

use serde::Serialize;
use specta::Type;

use crate::cache::CacheError;
use crate::industries::{IndustryStore, LoadInfo, MemberKind, pick_load};

/// What `code` belonged to on `day`.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct StockMembership {
    /// Six digits.
    pub code: String,
    /// The day asked for, `YYYYMMDD` (`None`: the latest loads).
    pub day: Option<u32>,
    pub industry: Option<String>,
    /// The load the industry was read from.
    pub industry_load: Option<LoadInfo>,
    /// The industry is a later membership standing in for the day's (none that early).
    pub industry_later: bool,
    /// Concept blocks (概念), sorted.
    pub concepts: Vec<String>,
    /// Style blocks (风格), sorted.
    pub styles: Vec<String>,
    /// The block loads read (concepts, then styles).
    pub block_loads: Vec<LoadInfo>,
    /// A block load read is later than the day (none that early).
    pub blocks_later: bool,
}

impl IndustryStore {
    /// `code`'s industry and blocks as of `day` (the latest when `None`).
    pub async fn membership_of(
        &self,
        code: &str,
        day: Option<u32>,
    ) -> Result<StockMembership, CacheError> {
        let view = self.industries_as_of(day).await?;
        let loads = self.loads().await?;
        let mut out = StockMembership {
            code: code.to_string(),
            day,
            industry: view.industry.get(code).cloned(),
            industry_load: view.load.clone(),
            industry_later: view.industry.contains_key(code) && view.later_for(code),
            concepts: Vec::new(),
            styles: Vec::new(),
            block_loads: Vec::new(),
            blocks_later: false,
        };
        for kind in [MemberKind::Concept, MemberKind::Style] {
            let of_kind: Vec<LoadInfo> = loads.iter().filter(|l| l.kind == kind).cloned().collect();
            let (Some(load), later) = pick_load(&of_kind, day) else {
                continue;
            };
            let names: Vec<String> = self
                .members(load.id)
                .await?
                .into_iter()
                .filter(|m| m.kind == kind && m.code == code)
                .map(|m| m.name)
                .collect();
            match kind {
                MemberKind::Concept => out.concepts = names,
                _ => out.styles = names,
            }
            out.blocks_later |= later;
            out.block_loads.push(load.clone());
        }
        out.concepts.sort();
        out.styles.sort();
        Ok(out)
    }
}
