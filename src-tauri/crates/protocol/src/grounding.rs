//! Where each number and stock code of an answer came from: the typed result of the
//! agent's grounding check, sent with the final answer (IPC, `wyckoff run --json`),
//! stored with the message and exported with the conversation.

use serde::{Deserialize, Serialize};
use specta::Type;

/// The grounding of one answer: the counts and every claim found in its text.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, Type)]
pub struct Grounding {
    /// Claims found in a tool result (or the user's own words).
    pub sourced: u32,
    /// Claims that are a difference or ratio of two sourced numbers.
    pub derived: u32,
    /// Claims found nowhere in the conversation's data.
    pub unsupported: u32,
    /// Of the unsupported claims, the stock codes no input mentions.
    pub invented_codes: u32,
    /// Whether the runtime asked the model once to correct this answer before it stood.
    #[serde(default)]
    pub corrected: bool,
    /// In the order they appear in the answer.
    pub claims: Vec<Claim>,
}

impl Grounding {
    /// Unsupported figures that a trader would act on: a price, or a stock code that no
    /// input mentions. These earn the model one correction round.
    pub fn needs_correction(&self) -> bool {
        self.claims.iter().any(|c| {
            matches!(c.support, Support::Unsupported {})
                && matches!(c.kind, ClaimKind::Price | ClaimKind::Code)
        })
    }

    /// The claims without a source, for the correction note and reports.
    pub fn unsupported_claims(&self) -> impl Iterator<Item = &Claim> {
        self.claims
            .iter()
            .filter(|c| matches!(c.support, Support::Unsupported {}))
    }
}

/// One number, date or code in the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct Claim {
    /// Offset of the claim's first character in the answer, counted in Unicode scalar
    /// values (characters, not bytes or UTF-16 units).
    pub start: u32,
    /// One past the claim's last character (same unit as `start`).
    pub end: u32,
    /// The claim as written, unit included (`12.35`, `5.23%`, `1.23亿`, `600519`).
    pub text: String,
    pub kind: ClaimKind,
    pub support: Support,
}

/// What a claim states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ClaimKind {
    /// A price: in 元, or after a price word (收盘, 价, support, stop…).
    Price,
    Percent,
    /// A volume or amount in 万 / 亿.
    Amount,
    /// A count of shares, lots, stocks, days, trades…
    Count,
    /// Any other number.
    Number,
    Date,
    /// A six-digit A-share stock code.
    Code,
}

/// Where a claim came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Support {
    Sourced {
        source: Source,
    },
    /// `op` applied to the two sources, in order (`a - b`, `a + b`, `a / b`, `(a - b) / b`,
    /// `a × b`). An operand may itself be derived: `a`/`b` then name where its first
    /// operand came from.
    Derived {
        op: DerivedOp,
        a: Source,
        b: Source,
    },
    Unsupported {},
}

/// How a derived number follows from its two sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum DerivedOp {
    Difference,
    Sum,
    Ratio,
    Change,
    /// Price × shares and the like.
    Product,
}

/// A place a value was read from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
// the journal's `Source` has the generated bindings' plain name
#[serde(rename = "GroundingSource")]
pub enum Source {
    /// A field of a tool call's result: `path` is a JSON path such as `data[3].close`
    /// (empty for the whole result; a text result's number is found inside the text).
    Tool {
        call_id: String,
        tool: String,
        path: String,
    },
    /// The user's own message in this conversation.
    User {},
    /// A system notice in the conversation (a finished background task, a decided
    /// approval), which carries its result as text.
    Notice {},
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn support_and_source_are_tagged() {
        let c = Claim {
            start: 3,
            end: 8,
            text: "12.35".into(),
            kind: ClaimKind::Price,
            support: Support::Sourced {
                source: Source::Tool {
                    call_id: "c1".into(),
                    tool: "analyze_stock".into(),
                    path: "close".into(),
                },
            },
        };
        assert_eq!(
            serde_json::to_value(&c).unwrap(),
            json!({"start":3,"end":8,"text":"12.35","kind":"price",
                   "support":{"type":"sourced","source":{"type":"tool","call_id":"c1","tool":"analyze_stock","path":"close"}}})
        );
        let u = Support::Unsupported {};
        assert_eq!(
            serde_json::to_value(&u).unwrap(),
            json!({"type":"unsupported"})
        );
    }

    #[test]
    fn only_unsupported_prices_and_codes_need_correction() {
        let claim = |kind, support| Claim {
            start: 0,
            end: 1,
            text: "1".into(),
            kind,
            support,
        };
        let mut g = Grounding {
            claims: vec![claim(ClaimKind::Percent, Support::Unsupported {})],
            ..Grounding::default()
        };
        assert!(!g.needs_correction());
        g.claims.push(claim(
            ClaimKind::Price,
            Support::Sourced {
                source: Source::User {},
            },
        ));
        assert!(!g.needs_correction());
        g.claims
            .push(claim(ClaimKind::Code, Support::Unsupported {}));
        assert!(g.needs_correction());
        assert_eq!(g.unsupported_claims().count(), 2);
    }
}
