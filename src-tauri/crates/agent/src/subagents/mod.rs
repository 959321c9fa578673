//! Sub-agents (seed 11_07): the research / analysis / trading roles a parent agent
//! delegates to, their governance (deadline, per-tool timeout, rounds, budgets), the
//! tool proxy that enforces each role's whitelist, and the structured result with the
//! policy telling the parent what to do next.
//!
//! Everything here except the proxy is a pure function of its inputs, so the policy
//! lives in tables and is tested as tables.

pub mod budget;
pub mod delegate;
pub mod policy;
pub mod proxy;
pub mod roles;
pub mod run;

pub use budget::{
    CONTEXT_TRUNCATED_MARKER, FittedContext, FittedResult, RESULT_TRUNCATED_MARKER, fit_context,
    fit_result,
};
pub use delegate::{
    Delegator, NOT_WIRED, SubAgentDelegator, delegate_tools, role_for_tool, run_delegate,
};
pub use policy::{SubAgentRun, build_result, policy_for};
pub use proxy::SubAgentToolProxy;
pub use roles::{ROLES, SubAgentRole, role};
pub use run::{SubAgentDeps, SubAgentParent, run_sub_agent};
