//! Which tools of the MCP servers a session offers the model, and under which names (pure).
//!
//! - Names: `mcp__<server>__<tool>` cleaned to what every provider takes
//!   ([`agent_tool_name`]). Two tools that are one name after cleaning (`get.quote` and
//!   `get_quote`) would replace each other, so they are told apart: the one whose name needed
//!   no cleaning keeps it, the others get a short hash of their real name added
//!   ([`distinct_tool_name`]), and are marked renamed. The decision looks at every tool the
//!   servers list, not only those offered, so a name does not change when a pick or a cap
//!   does. Should two names still be one, the later tool is left out and says why.
//! - Caps: a server's picked tools (or, without a pick, its tools in its own order) up to its
//!   cap, then all servers' in their order up to the total cap; everything left out is named
//!   with the reason.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use wyckoff_config::mcp::McpServer;

use crate::client::ToolReport;

/// Longest agent tool name the providers accept (OpenAI: `^[a-zA-Z0-9_-]{1,64}$`).
pub const MAX_TOOL_NAME: usize = 64;

fn cleaned(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `_` and 8 hex digits of the full name: FNV-1a, stable across runs and platforms (the
/// name is stored in conversations).
fn hash_suffix(server: &str, tool: &str) -> String {
    let hash = format!("{server}\u{0}{tool}")
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    format!("_{:08x}", hash & 0xffff_ffff)
}

fn with_suffix(clean: &str, suffix: &str) -> String {
    let keep = clean.len().min(MAX_TOOL_NAME - suffix.len());
    format!("{}{suffix}", &clean[..keep])
}

/// `mcp__<server>__<tool>` with anything outside `[A-Za-z0-9_-]` as `_`, cut to
/// [`MAX_TOOL_NAME`] characters with a short hash of the full name so two long names stay apart.
pub fn agent_tool_name(server: &str, tool: &str) -> String {
    let clean = cleaned(server, tool);
    if clean.len() <= MAX_TOOL_NAME {
        return clean;
    }
    with_suffix(&clean, &hash_suffix(server, tool))
}

/// The name of a tool whose cleaned name another tool has: the cleaned name with a short
/// hash of its real name.
pub fn distinct_tool_name(server: &str, tool: &str) -> String {
    with_suffix(&cleaned(server, tool), &hash_suffix(server, tool))
}

/// Why a tool is not offered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum LeftOut {
    /// The user picked other tools of this server.
    NotPicked,
    /// Over the server's cap.
    ServerCap { cap: u32 },
    /// Over the cap on all servers together.
    TotalCap { cap: u32 },
    /// Its name is another offered tool's, even told apart.
    NameClash { name: String },
}

impl std::fmt::Display for LeftOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LeftOut::NotPicked => write!(f, "not picked"),
            LeftOut::ServerCap { cap } => write!(f, "over the server's cap of {cap} tools"),
            LeftOut::TotalCap { cap } => {
                write!(f, "over the cap of {cap} MCP tools in all")
            }
            LeftOut::NameClash { name } => {
                write!(f, "its name {name} is another tool's")
            }
        }
    }
}

/// One listed tool: its name for the model and whether it is offered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Placed {
    pub server: String,
    /// The MCP name.
    pub tool: String,
    /// The agent's name for it (`mcp__…`).
    pub name: String,
    /// Told apart from another tool of the same cleaned name (the name has a hash).
    pub renamed: bool,
    /// Why it is not offered; none: offered.
    pub left_out: Option<LeftOut>,
}

/// Where every listed tool stands: `servers` in their order, each with the tools it listed
/// (in the server's order), under the total cap `max_total`.
pub fn place(servers: &[(&McpServer, &[ToolReport])], max_total: u32) -> Vec<Placed> {
    let mut placed: Vec<Placed> = servers
        .iter()
        .flat_map(|(s, tools)| {
            tools.iter().map(|t| Placed {
                server: s.name.clone(),
                tool: t.name.clone(),
                name: agent_tool_name(&s.name, &t.name),
                renamed: false,
                left_out: None,
            })
        })
        .collect();
    // tools that are one name after cleaning: the first whose name needed no cleaning keeps
    // it, the others are told apart
    let mut groups: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, p) in placed.iter().enumerate() {
        groups.entry(p.name.clone()).or_default().push(i);
    }
    for members in groups.values().filter(|m| m.len() > 1) {
        let keeper = members
            .iter()
            .copied()
            .find(|&i| placed[i].name == format!("mcp__{}__{}", placed[i].server, placed[i].tool));
        for &i in members.iter().filter(|&&i| Some(i) != keeper) {
            placed[i].name = distinct_tool_name(&placed[i].server, &placed[i].tool);
            placed[i].renamed = true;
        }
    }
    let mut taken = HashSet::new();
    for p in &mut placed {
        if !taken.insert(p.name.clone()) {
            p.left_out = Some(LeftOut::NameClash {
                name: p.name.clone(),
            });
        }
    }
    let mut total = 0u32;
    for (s, _) in servers {
        let cap = s.tool_cap();
        let mut offered = 0u32;
        for p in placed
            .iter_mut()
            .filter(|p| p.server == s.name && p.left_out.is_none())
        {
            if s.offered_tools
                .as_ref()
                .is_some_and(|picked| !picked.contains(&p.tool))
            {
                p.left_out = Some(LeftOut::NotPicked);
            } else if offered >= cap {
                p.left_out = Some(LeftOut::ServerCap { cap });
            } else if total >= max_total {
                p.left_out = Some(LeftOut::TotalCap { cap: max_total });
            } else {
                offered += 1;
                total += 1;
            }
        }
    }
    placed
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;
    use wyckoff_config::mcp::McpTransport;

    fn server(name: &str, cap: Option<u32>, pick: Option<&[&str]>) -> McpServer {
        McpServer {
            name: name.into(),
            transport: McpTransport::Stdio {
                command: "srv".into(),
                args: vec![],
                env: vec![],
            },
            enabled: true,
            always_ask: false,
            trusted_tools: vec![],
            max_tools: cap,
            offered_tools: pick.map(|p| p.iter().map(|t| (*t).to_owned()).collect()),
        }
    }

    fn tools(names: &[&str]) -> Vec<ToolReport> {
        names
            .iter()
            .map(|n| ToolReport {
                name: (*n).to_owned(),
                description: None,
                read_only: Some(true),
                input_schema: json!({"type": "object"}),
            })
            .collect()
    }

    fn offered(placed: &[Placed]) -> Vec<&str> {
        placed
            .iter()
            .filter(|p| p.left_out.is_none())
            .map(|p| p.name.as_str())
            .collect()
    }

    #[test]
    fn tool_names_fit_every_provider() {
        assert_eq!(
            agent_tool_name("time", "get_current_time"),
            "mcp__time__get_current_time"
        );
        assert_eq!(
            agent_tool_name("fs", "read.file v2"),
            "mcp__fs__read_file_v2"
        );
        let exact = format!("mcp__s__{}", "x".repeat(MAX_TOOL_NAME - 8));
        assert_eq!(exact.len(), MAX_TOOL_NAME);
        assert_eq!(agent_tool_name("s", &"x".repeat(MAX_TOOL_NAME - 8)), exact);
        let long_a = agent_tool_name("s", &format!("{}a", "x".repeat(MAX_TOOL_NAME)));
        let long_b = agent_tool_name("s", &format!("{}b", "x".repeat(MAX_TOOL_NAME)));
        assert_eq!(long_a.len(), MAX_TOOL_NAME);
        assert_eq!(long_b.len(), MAX_TOOL_NAME);
        assert_ne!(long_a, long_b);
        assert_eq!(
            long_a,
            agent_tool_name("s", &format!("{}a", "x".repeat(MAX_TOOL_NAME)))
        );
    }

    #[test]
    fn names_that_are_one_after_cleaning_are_told_apart() {
        let s = server("s", None, None);
        for order in [["get.quote", "get_quote"], ["get_quote", "get.quote"]] {
            let listed = tools(&order);
            let placed = place(&[(&s, &listed)], 80);
            let by_tool = |t: &str| placed.iter().find(|p| p.tool == t).unwrap();
            // the clean one keeps its name whatever the order; the other is renamed
            assert_eq!(by_tool("get_quote").name, "mcp__s__get_quote");
            assert!(!by_tool("get_quote").renamed);
            let other = by_tool("get.quote");
            assert!(other.renamed);
            assert_eq!(other.name, distinct_tool_name("s", "get.quote"));
            assert!(
                other.name.starts_with("mcp__s__get_quote_"),
                "{}",
                other.name
            );
            assert_eq!(offered(&placed).len(), 2);
        }
        // neither clean: both renamed, still two
        let listed = tools(&["get.quote", "get quote"]);
        let placed = place(&[(&s, &listed)], 80);
        assert!(placed.iter().all(|p| p.renamed && p.left_out.is_none()));
        assert_ne!(placed[0].name, placed[1].name);
        // across servers: `a` + `b__c` and `a__b` + `c` are one clean name; the first keeps it
        let (a, ab) = (server("a", None, None), server("a__b", None, None));
        let (la, lab) = (tools(&["b__c"]), tools(&["c"]));
        let placed = place(&[(&a, &la), (&ab, &lab)], 80);
        assert_eq!(placed[0].name, "mcp__a__b__c");
        assert!(placed[1].renamed && placed[1].left_out.is_none());
        // two long names with the same hash stay one name: the second is left out, said why
        let long = format!("{}.x", "y".repeat(70));
        let listed = tools(&[&long, &long]);
        let placed = place(&[(&s, &listed)], 80);
        assert_eq!(
            placed[1].left_out,
            Some(LeftOut::NameClash {
                name: placed[0].name.clone()
            })
        );
    }

    #[test]
    fn a_renamed_tool_keeps_its_name_when_the_other_is_left_out() {
        let picked = server("s", None, Some(&["get.quote"]));
        let listed = tools(&["get.quote", "get_quote"]);
        let placed = place(&[(&picked, &listed)], 80);
        assert_eq!(offered(&placed), [distinct_tool_name("s", "get.quote")]);
        assert_eq!(placed[1].left_out, Some(LeftOut::NotPicked));
    }

    #[test]
    fn caps_hold_exactly_at_the_limit() {
        let names: Vec<String> = (1..=5).map(|i| format!("t{i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let listed = tools(&names);
        // (server cap, total cap, second server's cap) → offered of the first, of the second
        let table: &[(u32, u32, u32, usize, usize)] = &[
            (3, 80, 40, 3, 5),
            (5, 80, 40, 5, 5),
            (3, 5, 40, 3, 2),
            (3, 3, 40, 3, 0),
            (5, 6, 1, 5, 1),
        ];
        for &(cap, total, cap2, want1, want2) in table {
            let (a, b) = (server("a", Some(cap), None), server("b", Some(cap2), None));
            let placed = place(&[(&a, &listed), (&b, &listed)], total);
            let count = |s: &str| {
                placed
                    .iter()
                    .filter(|p| p.server == s && p.left_out.is_none())
                    .count()
            };
            assert_eq!(
                (count("a"), count("b")),
                (want1, want2),
                "{cap} {total} {cap2}"
            );
        }
        // the first N in the server's order, the N+1th named with why
        let a = server("a", Some(3), None);
        let placed = place(&[(&a, &listed)], 80);
        assert_eq!(offered(&placed), ["mcp__a__t1", "mcp__a__t2", "mcp__a__t3"]);
        assert_eq!(placed[3].tool, "t4");
        assert_eq!(placed[3].left_out, Some(LeftOut::ServerCap { cap: 3 }));
        let b = server("b", Some(3), None);
        let placed = place(&[(&a, &listed), (&b, &listed)], 4);
        assert_eq!(placed[4].left_out, Some(LeftOut::ServerCap { cap: 3 }));
        assert_eq!(
            (placed[5].name.as_str(), &placed[5].left_out),
            ("mcp__b__t1", &None)
        );
        assert_eq!(placed[6].tool, "t2");
        assert_eq!(placed[6].left_out, Some(LeftOut::TotalCap { cap: 4 }));
    }

    #[test]
    fn a_pick_offers_just_those_tools_in_the_servers_order() {
        let listed = tools(&["t1", "t2", "t3", "t4"]);
        let s = server("s", Some(2), Some(&["t4", "t2"]));
        let placed = place(&[(&s, &listed)], 80);
        assert_eq!(offered(&placed), ["mcp__s__t2", "mcp__s__t4"]);
        assert_eq!(placed[0].left_out, Some(LeftOut::NotPicked));
    }
}
