//! The sub-agent roles' limits, for the pane's "rounds used / max · elapsed / deadline".
//! Read from the one governance table in `wyckoff-agent`, never copied into the UI.

use serde::Serialize;
use specta::Type;
use wyckoff_session::domain::agent::subagents::{ROLES, SubAgentRole};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct SubAgentRoleLimits {
    /// research, analysis or trading.
    pub name: String,
    /// The delegate tool that starts the role.
    pub delegate_tool: String,
    /// Its name in the progress lines (Chinese).
    pub label: String,
    pub max_tool_rounds: u32,
    /// The whole delegation's deadline.
    pub deadline_secs: u32,
}

impl From<&SubAgentRole> for SubAgentRoleLimits {
    fn from(role: &SubAgentRole) -> Self {
        SubAgentRoleLimits {
            name: role.name.to_owned(),
            delegate_tool: role.delegate_tool.to_owned(),
            label: role.label.to_owned(),
            max_tool_rounds: role.max_tool_rounds,
            deadline_secs: u32::try_from(role.timeout.as_secs()).unwrap_or(u32::MAX),
        }
    }
}

/// Every sub-agent role's limits.
#[tauri::command]
#[specta::specta]
pub fn sub_agent_roles() -> Vec<SubAgentRoleLimits> {
    ROLES.iter().map(SubAgentRoleLimits::from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_role_with_the_governance_tables_limits() {
        let roles = sub_agent_roles();
        assert_eq!(roles.len(), ROLES.len());
        for (view, role) in roles.iter().zip(ROLES.iter()) {
            assert_eq!(view.name, role.name);
            assert_eq!(view.delegate_tool, role.delegate_tool);
            assert_eq!(view.label, role.label);
            assert_eq!(view.max_tool_rounds, role.max_tool_rounds);
            assert_eq!(u64::from(view.deadline_secs), role.timeout.as_secs());
        }
    }
}
