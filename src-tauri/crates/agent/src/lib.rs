//! The agent runtime: ReAct loop, tool registry, approvals, guards, background tasks, scratchpad.
