//! The approval gate for dangerous tools (seed §2 危险工具确认).
//!
//! `decide` is the pure policy; `ApprovalGate` applies it inside the registry's execute
//! path, so no caller (parallel batch, background tool, sub-agent) can run a tool that
//! needs approval without passing here.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use wyckoff_protocol::{
    AlwaysAllows, ApprovalDecision, ApprovalPreview, ApprovalRequest, AuditDecision, Decider,
    DecisionKind, RuntimeEvent,
};

use crate::clock::Clock;
use crate::sink::EventSink;
use crate::tool::ToolSpec;

/// Default time a pending approval waits for an answer.
pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(120);

/// How a headless run answers approvals (`wyckoff run --approve never|all|TOOL,…`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeadlessApprover {
    /// Deny every tool that needs approval (the CLI default).
    Never,
    /// Approve everything.
    All,
    /// Approve only these tools.
    Only(HashSet<String>),
}

impl HeadlessApprover {
    /// Parses the CLI's `--approve` value.
    pub fn parse(value: &str) -> Self {
        match value.trim() {
            "" | "never" => HeadlessApprover::Never,
            "all" => HeadlessApprover::All,
            list => HeadlessApprover::Only(
                list.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect(),
            ),
        }
    }
}

impl HeadlessApprover {
    /// The `--approve` value this policy was parsed from (for the audit log).
    pub fn label(&self) -> String {
        match self {
            HeadlessApprover::Never => "never".to_owned(),
            HeadlessApprover::All => "all".to_owned(),
            HeadlessApprover::Only(set) => {
                let mut tools: Vec<&str> = set.iter().map(String::as_str).collect();
                tools.sort_unstable();
                tools.join(",")
            }
        }
    }
}

/// A call put in the approval inbox instead of being asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queued {
    pub request_id: String,
    /// RFC 3339: when the request stops being answerable.
    pub expires_at: String,
}

/// Answers approval requests: the desktop dialog, a terminal prompt, or a policy.
#[async_trait]
pub trait Approver: Send + Sync {
    /// Who decides the call `call_id` for this approver, as the audit log names it; `None`
    /// when the decision was recorded where it was made (an inbox answer replayed through
    /// the gate).
    fn decider(&self, _call_id: &str) -> Option<Decider> {
        match self.headless_policy() {
            Some(policy) => Some(Decider::Policy {
                approve: policy.label(),
            }),
            None => Some(Decider::Dialog),
        }
    }

    /// Approvers of runs with nobody to ask put the request in the approval inbox: the
    /// request as queued, or why it could not be queued. `None`: this approver asks.
    async fn enqueue(
        &self,
        _conversation_id: &str,
        _request: &ApprovalRequest,
    ) -> Option<Result<Queued, String>> {
        None
    }

    /// Set for approvers that decide by policy without asking anyone; the gate then
    /// decides synchronously and `request` is never called.
    fn headless_policy(&self) -> Option<&HeadlessApprover> {
        None
    }

    /// Asks for a decision. `None` means nobody answered (the gate also applies its own
    /// timeout, so an implementation may wait forever).
    async fn request(&self, request: ApprovalRequest) -> Option<ApprovalDecision>;
}

#[async_trait]
impl Approver for HeadlessApprover {
    fn headless_policy(&self) -> Option<&HeadlessApprover> {
        Some(self)
    }

    async fn request(&self, _request: ApprovalRequest) -> Option<ApprovalDecision> {
        None
    }
}

/// What the gate does with one call, before anyone is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateDecision {
    Run,
    Ask(Vec<DecisionKind>),
    Deny(String),
}

/// The pure approval policy.
///
/// - tools without `requires_approval` run;
/// - tools allowed "always" earlier in this session run;
/// - a headless policy allows or denies without asking;
/// - otherwise ask, offering edit only when the tool has arguments to edit.
pub fn decide(
    tool: &str,
    requires_approval: bool,
    has_args: bool,
    always_allowed: &HashSet<String>,
    headless: Option<&HeadlessApprover>,
) -> GateDecision {
    if !requires_approval || always_allowed.contains(tool) {
        return GateDecision::Run;
    }
    match headless {
        Some(HeadlessApprover::All) => GateDecision::Run,
        Some(HeadlessApprover::Only(set)) if set.contains(tool) => GateDecision::Run,
        Some(HeadlessApprover::Only(_)) => {
            GateDecision::Deny(headless_denial(tool, "not in the --approve list"))
        }
        Some(HeadlessApprover::Never) => {
            GateDecision::Deny(headless_denial(tool, "--approve never"))
        }
        None => {
            let mut kinds = vec![DecisionKind::AllowOnce, DecisionKind::AllowAlways];
            if has_args {
                kinds.push(DecisionKind::Edit);
            }
            kinds.push(DecisionKind::Deny);
            GateDecision::Ask(kinds)
        }
    }
}

/// The tool whose "always allow" is per base command rather than per tool.
pub const EXEC_COMMAND: &str = "exec_command";

/// Programs that run another program from their arguments: allowing one of them always
/// would allow anything.
const WRAPPERS: [&str; 24] = [
    "sh", "bash", "zsh", "dash", "ksh", "fish", "env", "sudo", "doas", "su", "xargs", "nohup",
    "setsid", "timeout", "nice", "ionice", "exec", "eval", "command", "builtin", "time", "watch",
    "strace", "busybox",
];

/// What an "always allow" of this call is remembered as, or `None` when it cannot be
/// remembered (the dialog then offers allow-once only): the key of [`always_allows`].
pub fn always_key(tool: &str, args: &Value) -> Option<String> {
    always_allows(tool, args).map(|scope| match scope {
        AlwaysAllows::Tool => tool.to_owned(),
        AlwaysAllows::BaseCommand { base } => format!("{EXEC_COMMAND}:{base}"),
    })
}

/// What an "always allow" of this call would let run from now on, or `None` when it
/// cannot be offered. The dialog shows it; the gate remembers it (as [`always_key`]).
///
/// Other tools: the tool, whatever its arguments. `exec_command`: the base command, for
/// a single simple command only; `&&`, `;`, pipes, `$( )`, backticks, redirections,
/// quotes, globs, newlines, `VAR=x` prefixes and interpreters/wrappers cannot ride on an
/// allowed base.
pub fn always_allows(tool: &str, args: &Value) -> Option<AlwaysAllows> {
    if tool != EXEC_COMMAND {
        return Some(AlwaysAllows::Tool);
    }
    let command = args.get("command")?.as_str()?.trim();
    let simple = command
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || " _./:=,+@%-".contains(c));
    let mut words = command.split(' ').filter(|w| !w.is_empty());
    let base = words.next()?;
    if !simple || base.contains('=') || base.starts_with('-') || WRAPPERS.contains(&base) {
        return None;
    }
    let base_name = base.rsplit('/').next().unwrap_or(base);
    if WRAPPERS.contains(&base_name) {
        return None;
    }
    // find runs or deletes from its arguments.
    if base_name == "find"
        && words.any(|w| matches!(w, "-exec" | "-execdir" | "-ok" | "-okdir" | "-delete"))
    {
        return None;
    }
    Some(AlwaysAllows::BaseCommand {
        base: base.to_owned(),
    })
}

fn headless_denial(tool: &str, why: &str) -> String {
    format!(
        "操作 [{tool}] 需要用户批准，但当前是无人值守运行，审批策略不允许它（{why}）。该操作没有执行。请在回答中说明需要用户批准后才能执行，不要声称已完成。"
    )
}

/// Text the model gets when the user denied a call.
pub fn denial_message(tool: &str, reason: Option<&str>) -> String {
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(r) => format!("用户拒绝执行此操作 [{tool}]：{r}"),
        None => format!("用户拒绝执行此操作 [{tool}]"),
    }
}

/// Text the model gets when nobody answered: explicitly not a refusal.
pub fn timeout_message(tool: &str) -> String {
    format!(
        "操作 [{tool}] 的确认请求等待超时，用户没有做出选择——这不是拒绝。不要声称用户拒绝或取消了操作。请说明确认超时、该操作尚未执行，并让用户确认后重试。"
    )
}

/// The result of passing the gate.
#[derive(Debug, Clone, PartialEq)]
pub enum GateOutcome {
    /// Run with these arguments (edited ones must be validated again).
    Proceed {
        args: Value,
        edited: bool,
    },
    /// Do not run; the message is the tool result the model sees.
    Refused(String),
    /// Put in the approval inbox; the value is the tool result the model sees.
    Queued(Value),
    Cancelled,
}

/// One approval decision, as the gate hands it to the audit log.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditRecord {
    pub conversation_id: String,
    pub call_id: String,
    pub tool: String,
    /// As called (the log masks secrets before storing).
    pub args: Value,
    pub decision: AuditDecision,
    pub decided_by: Decider,
}

/// Where every approval decision is kept (the inbox crate's audit log).
#[async_trait]
pub trait ApprovalAudit: Send + Sync {
    /// Records one decision; a failure is the log's to report, never the call's.
    async fn record(&self, record: AuditRecord);
}

/// The tool result of a call queued in the inbox: it neither ran nor was refused.
pub fn queued_result(tool: &str, queued: &Queued) -> Value {
    serde_json::json!({
        "status": "waiting_for_approval",
        "request_id": queued.request_id,
        "expires_at": queued.expires_at,
        "message": format!(
            "操作 [{tool}] 需要用户批准，已放入审批收件箱等待批准（请求 {}，{} 前有效）。它现在没有执行，也没有被拒绝；用户批准或拒绝后，结果会在后续消息中告诉你。请在回答中说明它在等待批准，不要声称已完成。",
            queued.request_id, queued.expires_at
        ),
    })
}

/// The per-session gate: the approver, the "always allow" set and the timeout.
pub struct ApprovalGate {
    approver: Arc<dyn Approver>,
    always_allowed: Mutex<HashSet<String>>,
    timeout: Duration,
    clock: Arc<dyn Clock>,
    audit: OnceLock<Arc<dyn ApprovalAudit>>,
    /// Call ids the approval inbox allowed: each passes once without asking.
    preapproved: Mutex<HashSet<String>>,
}

impl ApprovalGate {
    pub fn new(approver: Arc<dyn Approver>, timeout: Duration, clock: Arc<dyn Clock>) -> Self {
        ApprovalGate {
            approver,
            always_allowed: Mutex::new(HashSet::new()),
            timeout,
            clock,
            audit: OnceLock::new(),
            preapproved: Mutex::new(HashSet::new()),
        }
    }

    /// The approval inbox allowed this call: its next check passes once, without asking
    /// (the decision is already in the audit log, where the inbox recorded it).
    pub fn preapprove(&self, call_id: &str) {
        if let Ok(mut set) = self.preapproved.lock() {
            set.insert(call_id.to_owned());
        }
    }

    fn take_preapproved(&self, call_id: &str) -> bool {
        self.preapproved
            .lock()
            .map(|mut set| set.remove(call_id))
            .unwrap_or(false)
    }

    /// Sends every decision of this gate to `audit` from now on (set once).
    pub fn set_audit(&self, audit: Arc<dyn ApprovalAudit>) {
        if self.audit.set(audit).is_err() {
            tracing::warn!("the approval gate already has an audit log");
        }
    }

    async fn audit(
        &self,
        conversation_id: &str,
        call_id: &str,
        tool: &str,
        args: &Value,
        decision: AuditDecision,
        decided_by: Option<Decider>,
    ) {
        let (Some(audit), Some(decided_by)) = (self.audit.get(), decided_by) else {
            return;
        };
        audit
            .record(AuditRecord {
                conversation_id: conversation_id.to_owned(),
                call_id: call_id.to_owned(),
                tool: tool.to_owned(),
                args: args.clone(),
                decision,
                decided_by,
            })
            .await;
    }

    /// Tools the user allowed for the rest of the session.
    pub fn always_allowed(&self) -> HashSet<String> {
        self.always_allowed
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default()
    }

    /// Takes back an "always allow": the tool asks again from its next call. False when
    /// it was not always-allowed.
    pub fn revoke(&self, tool: &str) -> bool {
        self.always_allowed
            .lock()
            .map(|mut s| s.remove(tool))
            .unwrap_or(false)
    }

    /// Decides whether the call may run, asking the approver when needed.
    /// `has_args`: whether the tool declares arguments (edit is offered only then);
    /// `preview` goes into the request when the user is asked; `conversation_id` is the
    /// session's (the inbox and the audit log name it).
    #[allow(clippy::too_many_arguments)]
    pub async fn check(
        &self,
        conversation_id: &str,
        spec: &ToolSpec,
        has_args: bool,
        call_id: &str,
        args: Value,
        preview: Option<ApprovalPreview>,
        sink: &dyn EventSink,
        cancel: &CancellationToken,
    ) -> GateOutcome {
        let tool = spec.name.as_str();
        let display_name = spec.display_name.as_str();
        if spec.requires_approval && self.take_preapproved(call_id) {
            return GateOutcome::Proceed {
                args,
                edited: false,
            };
        }
        let scope = always_allows(tool, &args);
        let key = always_key(tool, &args);
        let allowed_before: HashSet<String> = key
            .as_ref()
            .filter(|k| self.always_allowed().contains(k.as_str()))
            .map(|_| HashSet::from([tool.to_owned()]))
            .unwrap_or_default();
        let decision = decide(
            tool,
            spec.requires_approval,
            has_args,
            &allowed_before,
            self.approver.headless_policy(),
        );
        // Borrows `args` only where it is used, so the arms can move them afterwards.
        macro_rules! audit {
            ($decision:expr, $by:expr) => {
                self.audit(conversation_id, call_id, tool, &args, $decision, $by)
                    .await
            };
        }
        let available = match decision {
            GateDecision::Run => {
                if spec.requires_approval {
                    let by = if allowed_before.is_empty() {
                        self.approver.decider(call_id)
                    } else {
                        Some(Decider::AlwaysAllow)
                    };
                    audit!(AuditDecision::Allowed, by);
                }
                return GateOutcome::Proceed {
                    args,
                    edited: false,
                };
            }
            GateDecision::Deny(msg) => {
                audit!(AuditDecision::Denied, self.approver.decider(call_id));
                sink.emit(RuntimeEvent::ApprovalResolved {
                    id: call_id.to_owned(),
                    outcome: "denied_by_policy".to_owned(),
                });
                return GateOutcome::Refused(msg);
            }
            // A call whose "always" could not be remembered is not offered it.
            GateDecision::Ask(kinds) if key.is_none() => kinds
                .into_iter()
                .filter(|k| *k != DecisionKind::AllowAlways)
                .collect(),
            GateDecision::Ask(kinds) => kinds,
        };

        let request = ApprovalRequest {
            id: call_id.to_owned(),
            tool: tool.to_owned(),
            display_name: display_name.to_owned(),
            args: args.clone(),
            always_allows: scope.filter(|_| available.contains(&DecisionKind::AllowAlways)),
            available_decisions: available.clone(),
            preview,
        };
        // Nobody to ask: the call waits in the inbox (neither run nor refused).
        if let Some(queued) = self.approver.enqueue(conversation_id, &request).await {
            let outcome = match queued {
                Ok(queued) => {
                    tracing::info!(tool, call_id, request = %queued.request_id, "approval queued");
                    audit!(AuditDecision::Queued, self.approver.decider(call_id));
                    GateOutcome::Queued(queued_result(tool, &queued))
                }
                Err(why) => {
                    tracing::warn!(tool, call_id, "cannot queue the approval: {why}");
                    audit!(AuditDecision::Denied, self.approver.decider(call_id));
                    GateOutcome::Refused(format!(
                        "操作 [{tool}] 需要用户批准，但无法放入审批收件箱（{why}）。该操作没有执行。"
                    ))
                }
            };
            sink.emit(RuntimeEvent::ApprovalResolved {
                id: call_id.to_owned(),
                outcome: if matches!(outcome, GateOutcome::Queued(_)) {
                    "queued"
                } else {
                    "denied_by_policy"
                }
                .to_owned(),
            });
            return outcome;
        }
        tracing::info!(tool, call_id, "approval requested");
        sink.emit(RuntimeEvent::ApprovalRequest {
            request: request.clone(),
        });
        let answer = tokio::select! {
            biased;
            _ = cancel.cancelled() => {
                sink.emit(RuntimeEvent::ApprovalResolved { id: call_id.to_owned(), outcome: "cancelled".to_owned() });
                return GateOutcome::Cancelled;
            }
            a = self.approver.request(request) => a,
            _ = self.clock.sleep(self.timeout) => None,
        };
        let resolve = |outcome: &str| {
            sink.emit(RuntimeEvent::ApprovalResolved {
                id: call_id.to_owned(),
                outcome: outcome.to_owned(),
            })
        };
        let decider = self.approver.decider(call_id);
        let Some(answer) = answer else {
            audit!(AuditDecision::TimedOut, decider);
            resolve("timeout");
            return GateOutcome::Refused(timeout_message(tool));
        };
        if !available.contains(&answer.kind()) {
            resolve("invalid_decision");
            return GateOutcome::Refused(format!(
                "操作 [{tool}] 收到了不可用的审批选项，该操作没有执行。"
            ));
        }
        match answer {
            ApprovalDecision::AllowOnce => {
                audit!(AuditDecision::Allowed, decider);
                resolve("allow_once");
                GateOutcome::Proceed {
                    args,
                    edited: false,
                }
            }
            ApprovalDecision::AllowAlways => {
                if let (Ok(mut set), Some(key)) = (self.always_allowed.lock(), key) {
                    set.insert(key);
                }
                audit!(AuditDecision::AllowedAlways, decider);
                resolve("allow_always");
                GateOutcome::Proceed {
                    args,
                    edited: false,
                }
            }
            ApprovalDecision::Edit { args: edited } => {
                audit!(AuditDecision::Edited, decider);
                resolve("edit");
                GateOutcome::Proceed {
                    args: edited,
                    edited: true,
                }
            }
            ApprovalDecision::Deny { reason } => {
                audit!(AuditDecision::Denied, decider);
                resolve("deny");
                GateOutcome::Refused(denial_message(tool, reason.as_deref()))
            }
        }
    }
}

/// An approver that parks each request until someone calls `answer` with its id: the
/// desktop app's bridge (the request itself reaches the UI as an `approval_request`
/// event on the turn's channel) and a terminal prompt both fit on top of it.
#[derive(Default)]
pub struct PendingApprovals {
    waiting: Mutex<HashMap<String, oneshot::Sender<ApprovalDecision>>>,
}

impl PendingApprovals {
    pub fn new() -> Arc<Self> {
        Arc::new(PendingApprovals::default())
    }

    /// Delivers a decision. Returns false when no request with that id is pending
    /// (already answered, timed out, or unknown).
    pub fn answer(&self, id: &str, decision: ApprovalDecision) -> bool {
        let sender = self.waiting.lock().ok().and_then(|mut w| w.remove(id));
        match sender {
            Some(tx) => tx.send(decision).is_ok(),
            None => false,
        }
    }

    /// Ids of requests waiting for an answer.
    pub fn pending(&self) -> Vec<String> {
        self.waiting
            .lock()
            .map(|w| w.keys().cloned().collect())
            .unwrap_or_default()
    }
}

#[async_trait]
impl Approver for PendingApprovals {
    async fn request(&self, request: ApprovalRequest) -> Option<ApprovalDecision> {
        let (tx, rx) = oneshot::channel();
        if let Ok(mut w) = self.waiting.lock() {
            w.insert(request.id.clone(), tx);
        }
        // Removes the entry if the gate gives up first (timeout/cancel drops this future).
        struct Cleanup<'a>(&'a PendingApprovals, String);
        impl Drop for Cleanup<'_> {
            fn drop(&mut self) {
                if let Ok(mut w) = self.0.waiting.lock() {
                    w.remove(&self.1);
                }
            }
        }
        let _cleanup = Cleanup(self, request.id.clone());
        rx.await.ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::sink::CollectingSink;
    use DecisionKind::*;
    use serde_json::json;

    fn spec(name: &str) -> ToolSpec {
        ToolSpec::new(name, name).requires_approval()
    }

    fn set(items: &[&str]) -> HashSet<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn decision_table() {
        let only = HeadlessApprover::Only(set(&["write_file"]));
        let all4 = vec![AllowOnce, AllowAlways, Edit, Deny];
        let no_edit = vec![AllowOnce, AllowAlways, Deny];
        // (tool, requires_approval, has_args, always, headless, expected)
        type Case<'a> = (
            &'a str,
            bool,
            bool,
            HashSet<String>,
            Option<&'a HeadlessApprover>,
            GateDecision,
        );
        let cases: Vec<Case> = vec![
            (
                "analyze_stock",
                false,
                true,
                set(&[]),
                None,
                GateDecision::Run,
            ),
            (
                "analyze_stock",
                false,
                true,
                set(&[]),
                Some(&HeadlessApprover::Never),
                GateDecision::Run,
            ),
            (
                "exec_command",
                true,
                true,
                set(&[]),
                None,
                GateDecision::Ask(all4.clone()),
            ),
            (
                "diagnose",
                true,
                false,
                set(&[]),
                None,
                GateDecision::Ask(no_edit),
            ),
            (
                "exec_command",
                true,
                true,
                set(&["exec_command"]),
                None,
                GateDecision::Run,
            ),
            (
                "exec_command",
                true,
                true,
                set(&["write_file"]),
                None,
                GateDecision::Ask(all4),
            ),
            (
                "exec_command",
                true,
                true,
                set(&[]),
                Some(&HeadlessApprover::All),
                GateDecision::Run,
            ),
            (
                "write_file",
                true,
                true,
                set(&[]),
                Some(&only),
                GateDecision::Run,
            ),
            (
                "exec_command",
                true,
                true,
                set(&["exec_command"]),
                Some(&HeadlessApprover::Never),
                GateDecision::Run,
            ),
        ];
        for (tool, req, has_args, always, headless, want) in cases {
            assert_eq!(
                decide(tool, req, has_args, &always, headless),
                want,
                "{tool} {req} {always:?} {headless:?}"
            );
        }
        for (tool, headless) in [
            ("exec_command", &HeadlessApprover::Never),
            ("exec_command", &only),
        ] {
            match decide(tool, true, true, &set(&[]), Some(headless)) {
                GateDecision::Deny(msg) => assert!(msg.contains("没有执行"), "{msg}"),
                other => panic!("{tool} {headless:?}: {other:?}"),
            }
        }
    }

    /// Keeps what the gate audits.
    #[derive(Default)]
    struct Recorded(Mutex<Vec<(String, AuditDecision, Decider)>>);

    #[async_trait]
    impl ApprovalAudit for Recorded {
        async fn record(&self, r: AuditRecord) {
            assert_eq!(r.conversation_id, "s1");
            self.0
                .lock()
                .unwrap()
                .push((r.call_id, r.decision, r.decided_by));
        }
    }

    /// Queues every request under `q-<call id>`.
    struct Queueing;

    #[async_trait]
    impl Approver for Queueing {
        fn decider(&self, _call_id: &str) -> Option<Decider> {
            Some(Decider::Policy {
                approve: "queue".into(),
            })
        }
        async fn enqueue(
            &self,
            _conversation_id: &str,
            request: &ApprovalRequest,
        ) -> Option<Result<Queued, String>> {
            Some(Ok(Queued {
                request_id: format!("q-{}", request.id),
                expires_at: "2026-12-05T07:00:00Z".into(),
            }))
        }
        async fn request(&self, _request: ApprovalRequest) -> Option<ApprovalDecision> {
            None
        }
    }

    async fn audited_gate(approver: Arc<dyn Approver>) -> (Arc<ApprovalGate>, Arc<Recorded>) {
        let gate = Arc::new(ApprovalGate::new(
            approver,
            DEFAULT_APPROVAL_TIMEOUT,
            Arc::new(ManualClock::default()),
        ));
        let audit = Arc::new(Recorded::default());
        gate.set_audit(audit.clone());
        (gate, audit)
    }

    async fn check_once(gate: &ApprovalGate, spec: &ToolSpec, id: &str) -> GateOutcome {
        gate.check(
            "s1",
            spec,
            true,
            id,
            json!({"path": "a.md"}),
            None,
            CollectingSink::new().as_ref(),
            &CancellationToken::new(),
        )
        .await
    }

    #[tokio::test]
    async fn every_decision_path_is_audited() {
        let policy = |approve: &str| Decider::Policy {
            approve: approve.into(),
        };
        // --approve flags.
        for (approver, decision, by) in [
            (
                HeadlessApprover::Never,
                AuditDecision::Denied,
                policy("never"),
            ),
            (HeadlessApprover::All, AuditDecision::Allowed, policy("all")),
            (
                HeadlessApprover::parse("write_file"),
                AuditDecision::Allowed,
                policy("write_file"),
            ),
            (
                HeadlessApprover::parse("exec_command"),
                AuditDecision::Denied,
                policy("exec_command"),
            ),
        ] {
            let (gate, audit) = audited_gate(Arc::new(approver)).await;
            check_once(&gate, &spec("write_file"), "p1").await;
            // A tool that needs no approval is no decision.
            check_once(&gate, &ToolSpec::new("portfolio", "portfolio"), "p2").await;
            assert_eq!(*audit.0.lock().unwrap(), vec![("p1".into(), decision, by)]);
        }

        // The dialog: always, then the always-allow rule, deny, timeout.
        let pending = PendingApprovals::new();
        let clock = Arc::new(ManualClock::default());
        let gate = Arc::new(ApprovalGate::new(
            pending.clone(),
            DEFAULT_APPROVAL_TIMEOUT,
            clock.clone(),
        ));
        let audit = Arc::new(Recorded::default());
        gate.set_audit(audit.clone());
        for (id, answer) in [("d1", Some(ApprovalDecision::AllowAlways)), ("d2", None)] {
            let g = gate.clone();
            let task = tokio::spawn(async move { check_once(&g, &spec("write_file"), id).await });
            if let Some(answer) = answer {
                while !pending.answer(id, answer.clone()) {
                    tokio::task::yield_now().await;
                }
            }
            assert!(matches!(task.await.unwrap(), GateOutcome::Proceed { .. }));
        }
        for (id, answer) in [
            ("d3", Some(ApprovalDecision::Deny { reason: None })),
            ("d4", None),
        ] {
            let g = gate.clone();
            let task = tokio::spawn(async move { check_once(&g, &spec("exec_command"), id).await });
            while pending.pending().is_empty() {
                tokio::task::yield_now().await;
            }
            match answer {
                Some(answer) => assert!(pending.answer(id, answer)),
                None => clock.advance(Duration::from_secs(121)),
            }
            assert!(matches!(task.await.unwrap(), GateOutcome::Refused(_)));
        }
        assert_eq!(
            *audit.0.lock().unwrap(),
            vec![
                ("d1".into(), AuditDecision::AllowedAlways, Decider::Dialog),
                ("d2".into(), AuditDecision::Allowed, Decider::AlwaysAllow),
                ("d3".into(), AuditDecision::Denied, Decider::Dialog),
                ("d4".into(), AuditDecision::TimedOut, Decider::Dialog),
            ]
        );

        // Nobody to ask: queued, the model told it waits (neither run nor refused).
        let (gate, audit) = audited_gate(Arc::new(Queueing)).await;
        match check_once(&gate, &spec("write_file"), "w1").await {
            GateOutcome::Queued(result) => {
                assert_eq!(result["status"], "waiting_for_approval");
                assert_eq!(result["request_id"], "q-w1");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            *audit.0.lock().unwrap(),
            vec![("w1".into(), AuditDecision::Queued, policy("queue"))]
        );
    }

    #[tokio::test]
    async fn an_inbox_approval_passes_its_call_once_without_asking_or_auditing() {
        let (gate, audit) = audited_gate(Arc::new(HeadlessApprover::Never)).await;
        gate.preapprove("apr-1");
        assert!(matches!(
            check_once(&gate, &spec("update_portfolio"), "apr-1").await,
            GateOutcome::Proceed { edited: false, .. }
        ));
        assert!(audit.0.lock().unwrap().is_empty());
        // Once only; another call is not covered.
        for id in ["apr-1", "apr-2"] {
            assert!(matches!(
                check_once(&gate, &spec("update_portfolio"), id).await,
                GateOutcome::Refused(_)
            ));
        }
        assert_eq!(audit.0.lock().unwrap().len(), 2);
    }

    #[test]
    fn parses_cli_policy() {
        assert_eq!(HeadlessApprover::parse("never"), HeadlessApprover::Never);
        assert_eq!(HeadlessApprover::parse("all"), HeadlessApprover::All);
        assert_eq!(
            HeadlessApprover::parse("write_file, exec_command"),
            HeadlessApprover::Only(set(&["write_file", "exec_command"]))
        );
    }

    #[tokio::test]
    async fn timeout_is_no_answer_not_refusal() {
        let clock = Arc::new(ManualClock::default());
        let pending = PendingApprovals::new();
        let gate = Arc::new(ApprovalGate::new(
            pending.clone(),
            DEFAULT_APPROVAL_TIMEOUT,
            clock.clone(),
        ));
        let sink = CollectingSink::new();
        let (g, s) = (gate.clone(), sink.clone());
        let task = tokio::spawn(async move {
            g.check(
                "s1",
                &spec("exec_command"),
                true,
                "c1",
                json!({"command": "ls"}),
                None,
                s.as_ref(),
                &CancellationToken::new(),
            )
            .await
        });
        while pending.pending().is_empty() {
            tokio::task::yield_now().await;
        }
        clock.advance(Duration::from_secs(121));
        let out = task.await.unwrap();
        match out {
            GateOutcome::Refused(msg) => {
                assert!(msg.contains("这不是拒绝"), "{msg}");
                assert!(!msg.starts_with("用户拒绝"));
            }
            other => panic!("{other:?}"),
        }
        assert!(
            pending.pending().is_empty(),
            "timed-out request must be forgotten"
        );
        assert!(sink.events().iter().any(
            |e| matches!(e, RuntimeEvent::ApprovalResolved { outcome, .. } if outcome == "timeout")
        ));
    }

    #[tokio::test]
    async fn always_is_remembered_for_the_session() {
        let pending = PendingApprovals::new();
        let gate = Arc::new(ApprovalGate::new(
            pending.clone(),
            DEFAULT_APPROVAL_TIMEOUT,
            Arc::new(ManualClock::default()),
        ));
        let sink = CollectingSink::new();
        let (g, s) = (gate.clone(), sink.clone());
        let task = tokio::spawn(async move {
            g.check(
                "s1",
                &spec("write_file"),
                true,
                "c1",
                json!({}),
                None,
                s.as_ref(),
                &CancellationToken::new(),
            )
            .await
        });
        while !pending.answer("c1", ApprovalDecision::AllowAlways) {
            tokio::task::yield_now().await;
        }
        assert!(matches!(task.await.unwrap(), GateOutcome::Proceed { .. }));
        // Second call runs without asking.
        let out = gate
            .check(
                "s1",
                &spec("write_file"),
                true,
                "c2",
                json!({}),
                None,
                sink.as_ref(),
                &CancellationToken::new(),
            )
            .await;
        assert!(matches!(out, GateOutcome::Proceed { edited: false, .. }));
        let asks = sink
            .events()
            .iter()
            .filter(|e| matches!(e, RuntimeEvent::ApprovalRequest { .. }))
            .count();
        assert_eq!(asks, 1);

        // Revoked: the next call asks again (and is denied this time).
        assert!(gate.revoke("write_file"));
        assert!(!gate.revoke("write_file"));
        assert!(gate.always_allowed().is_empty());
        let (g, s) = (gate.clone(), sink.clone());
        let task = tokio::spawn(async move {
            g.check(
                "s1",
                &spec("write_file"),
                true,
                "c3",
                json!({}),
                None,
                s.as_ref(),
                &CancellationToken::new(),
            )
            .await
        });
        while !pending.answer("c3", ApprovalDecision::Deny { reason: None }) {
            tokio::task::yield_now().await;
        }
        assert!(!matches!(task.await.unwrap(), GateOutcome::Proceed { .. }));
        let asks = sink
            .events()
            .iter()
            .filter(|e| matches!(e, RuntimeEvent::ApprovalRequest { .. }))
            .count();
        assert_eq!(asks, 2);
    }

    #[test]
    fn exec_always_key_is_the_base_command_and_cannot_be_stretched() {
        let key = |command: &str| always_key(EXEC_COMMAND, &json!({ "command": command }));
        let base = |b: &str| Some(format!("exec_command:{b}"));
        assert_eq!(key("ls"), base("ls"));
        assert_eq!(key("  ls -la /tmp "), base("ls"));
        assert_eq!(key("git status --short"), base("git"));
        assert_eq!(key("/bin/ls -l"), base("/bin/ls"));
        assert_eq!(key("find . -name x.md"), base("find"));
        assert_eq!(
            always_key("write_file", &json!({})),
            Some("write_file".into())
        );
        let escalations = [
            "ls && rm -rf ~",
            "ls; rm -rf ~",
            "ls | sh",
            "ls || rm x",
            "ls & rm x",
            "ls $(rm x)",
            "ls `rm x`",
            "ls\nrm x",
            "ls\rrm x",
            "ls\trm",
            "ls > ~/.bashrc",
            "ls >> x",
            "ls < /etc/passwd",
            "ls 2>x",
            "ls 'a;b'",
            "ls \"a\"",
            "ls *",
            "ls ~",
            "ls {a,b}",
            "ls \\; rm",
            "ls #comment",
            "ls !!",
            "PATH=. ls",
            "sh -c ls",
            "bash",
            "/bin/sh -c rm",
            "env rm x",
            "sudo ls",
            "xargs rm",
            "eval ls",
            "exec rm",
            "timeout 5 rm x",
            "nohup rm x",
            "find . -delete",
            "find . -exec rm -rf x +",
            "-rf",
            "",
            "   ",
        ];
        for attempt in escalations {
            assert_eq!(key(attempt), None, "{attempt:?}");
        }
        assert_eq!(always_key(EXEC_COMMAND, &json!({})), None);
        assert_eq!(always_key(EXEC_COMMAND, &json!({"command": 5})), None);
    }

    async fn ask_exec(
        gate: &Arc<ApprovalGate>,
        pending: &Arc<PendingApprovals>,
        id: &str,
        command: &str,
        answer: Option<ApprovalDecision>,
    ) -> (bool, Vec<DecisionKind>) {
        let sink = CollectingSink::new();
        let (g, s, args) = (gate.clone(), sink.clone(), json!({ "command": command }));
        let call = id.to_owned();
        let task = tokio::spawn(async move {
            g.check(
                "s1",
                &spec(EXEC_COMMAND),
                true,
                &call,
                args,
                None,
                s.as_ref(),
                &CancellationToken::new(),
            )
            .await
        });
        if let Some(answer) = answer {
            while !pending.answer(id, answer.clone()) {
                tokio::task::yield_now().await;
            }
        }
        let ran = matches!(task.await.unwrap(), GateOutcome::Proceed { .. });
        let offered = sink
            .events()
            .iter()
            .find_map(|e| match e {
                RuntimeEvent::ApprovalRequest { request } => {
                    Some(request.available_decisions.clone())
                }
                _ => None,
            })
            .unwrap_or_default();
        (ran, offered)
    }

    /// The request the gate sends for `tool` with `args` (answered with a deny).
    async fn request_for(tool: &str, args: Value) -> ApprovalRequest {
        let pending = PendingApprovals::new();
        let gate = Arc::new(ApprovalGate::new(
            pending.clone(),
            DEFAULT_APPROVAL_TIMEOUT,
            Arc::new(ManualClock::default()),
        ));
        let sink = CollectingSink::new();
        let (g, s, spec) = (gate.clone(), sink.clone(), spec(tool));
        let task = tokio::spawn(async move {
            g.check(
                "s1",
                &spec,
                true,
                "r1",
                args,
                None,
                s.as_ref(),
                &CancellationToken::new(),
            )
            .await
        });
        while !pending.answer("r1", ApprovalDecision::Deny { reason: None }) {
            tokio::task::yield_now().await;
        }
        task.await.unwrap();
        sink.events()
            .into_iter()
            .find_map(|e| match e {
                RuntimeEvent::ApprovalRequest { request } => Some(request),
                _ => None,
            })
            .unwrap()
    }

    #[tokio::test]
    async fn the_request_says_what_always_allow_would_allow() {
        let git = request_for(EXEC_COMMAND, json!({"command": "git status --short"})).await;
        assert_eq!(
            git.always_allows,
            Some(AlwaysAllows::BaseCommand { base: "git".into() })
        );
        assert!(git.available_decisions.contains(&AllowAlways));
        let chained = request_for(EXEC_COMMAND, json!({"command": "git pull && make"})).await;
        assert_eq!(chained.always_allows, None);
        assert!(!chained.available_decisions.contains(&AllowAlways));
        let write = request_for("write_file", json!({"path": "a.md"})).await;
        assert_eq!(write.always_allows, Some(AlwaysAllows::Tool));
        // What the dialog names is what the gate remembers.
        for (command, key) in [
            ("git log", "exec_command:git"),
            ("/bin/ls -l", "exec_command:/bin/ls"),
        ] {
            let args = json!({ "command": command });
            let scope = always_allows(EXEC_COMMAND, &args).unwrap();
            let AlwaysAllows::BaseCommand { base } = &scope else {
                panic!("{scope:?}");
            };
            assert_eq!(format!("exec_command:{base}"), key);
            assert_eq!(always_key(EXEC_COMMAND, &args).as_deref(), Some(key));
        }
    }

    #[tokio::test]
    async fn exec_always_allow_covers_its_base_command_only() {
        let pending = PendingApprovals::new();
        let gate = Arc::new(ApprovalGate::new(
            pending.clone(),
            DEFAULT_APPROVAL_TIMEOUT,
            Arc::new(ManualClock::default()),
        ));
        let (ran, offered) = ask_exec(
            &gate,
            &pending,
            "e1",
            "ls -la",
            Some(ApprovalDecision::AllowAlways),
        )
        .await;
        assert!(ran && offered.contains(&DecisionKind::AllowAlways));
        assert!(gate.always_allowed().contains("exec_command:ls"));
        // Same base, other arguments: runs without asking.
        let (ran, offered) = ask_exec(&gate, &pending, "e2", "ls /tmp", None).await;
        assert!(ran && offered.is_empty());
        // Stretched through && : asked again, and "always" is not offered.
        let (ran, offered) = ask_exec(
            &gate,
            &pending,
            "e3",
            "ls && rm -rf x",
            Some(ApprovalDecision::Deny { reason: None }),
        )
        .await;
        assert!(!ran);
        assert!(!offered.is_empty() && !offered.contains(&DecisionKind::AllowAlways));
        // Another base command asks.
        let (ran, offered) = ask_exec(
            &gate,
            &pending,
            "e4",
            "rm x",
            Some(ApprovalDecision::Deny { reason: None }),
        )
        .await;
        assert!(!ran && offered.contains(&DecisionKind::AllowAlways));
        assert!(!gate.always_allowed().contains(EXEC_COMMAND));
    }
}
