// A sub-agent's pane inside its delegate tool card: what its `sub_agent` events say while
// it works (dimmed text, its tool calls with ✓/✗ and time), then the structured result
// (status, rounds, policy). The fold is pure, so recorded events replay in tests; a reopened
// conversation replays the steps stored with the result through the same fold.
import { useEffect, useState } from "react";
import { commands, type SubAgentStep, type Value } from "../bindings";

export type SubTool = { name: string; status: "running" | "ok" | "error"; ms: number | null; error: string | null };

export type SubAgentPane = {
  agent: string;
  text: string;
  tools: SubTool[];
  /** Tool rounds run so far, as the backend counts them against the role's cap. */
  toolRounds: number;
  failed: string | null;
};

export function isDelegate(tool: string): boolean {
  return tool.startsWith("delegate_to_");
}

export function emptyPane(agent: string): SubAgentPane {
  return { agent, text: "", tools: [], toolRounds: 0, failed: null };
}

/** The pane of a reopened delegate call: its stored steps folded as the live events were. */
export function paneFromSteps(agent: string, steps: SubAgentStep[]): SubAgentPane {
  return steps.reduce((pane, s) => reducePane(pane, s.kind, s.text), emptyPane(agent));
}

/** Folds one `sub_agent` event (kind: text | tool_round | tool_start | tool_result | tool_error | done | failed | retry | warning). */
export function reducePane(pane: SubAgentPane, kind: string, text: string): SubAgentPane {
  switch (kind) {
    case "text":
      return { ...pane, text: pane.text + text };
    case "tool_round": {
      const n = Number(text);
      return Number.isInteger(n) ? { ...pane, toolRounds: n } : pane;
    }
    case "tool_start":
      return { ...pane, tools: [...pane.tools, { name: text, status: "running", ms: null, error: null }] };
    case "tool_result": {
      // "<name> <ms>ms"
      const m = /^(\S+)\s+(\d+)ms$/.exec(text);
      const name = m ? m[1] : text;
      const ms = m ? Number(m[2]) : null;
      return { ...pane, tools: finish(pane.tools, name, (t) => ({ ...t, status: "ok", ms })) };
    }
    case "tool_error": {
      const i = text.indexOf(": ");
      const name = i > 0 ? text.slice(0, i) : text;
      const error = i > 0 ? text.slice(i + 2) : text;
      return { ...pane, tools: finish(pane.tools, name, (t) => ({ ...t, status: "error", error })) };
    }
    case "failed":
      return { ...pane, failed: text };
    default:
      return pane;
  }
}

/** The last running call of `name` (else a new row) updated by `f`. */
function finish(tools: SubTool[], name: string, f: (t: SubTool) => SubTool): SubTool[] {
  for (let i = tools.length - 1; i >= 0; i--) {
    if (tools[i].name === name && tools[i].status === "running") {
      return tools.map((t, j) => (j === i ? f(t) : t));
    }
  }
  return [...tools, f({ name, status: "running", ms: null, error: null })];
}

export type SubAgentOutcome = {
  agent: string;
  status: string;
  result: string;
  rounds: number | null;
  toolRounds: number | null;
  elapsed: number | null;
  toolCalls: string[];
  nextAction: string;
  instruction: string;
  error: string;
  contextTruncated: boolean;
  resultTruncated: boolean;
};

/** The structured result of a delegate call, when `result` is one. */
export function asOutcome(result: Value | null): SubAgentOutcome | null {
  if (result === null || typeof result !== "object" || Array.isArray(result)) return null;
  const r = result as Record<string, Value>;
  if (typeof r.agent !== "string" || typeof r.status !== "string") return null;
  const policy = (r.policy && typeof r.policy === "object" && !Array.isArray(r.policy) ? r.policy : {}) as Record<string, Value>;
  return {
    agent: r.agent,
    status: r.status,
    result: typeof r.result === "string" ? r.result : "",
    rounds: typeof r.rounds === "number" ? r.rounds : null,
    toolRounds: typeof r.tool_rounds === "number" ? r.tool_rounds : null,
    elapsed: typeof r.elapsed === "number" ? r.elapsed : null,
    toolCalls: Array.isArray(r.tool_calls) ? r.tool_calls.filter((t): t is string => typeof t === "string") : [],
    nextAction: typeof policy.next_action === "string" ? policy.next_action : "",
    instruction: typeof policy.instruction === "string" ? policy.instruction : "",
    error: typeof r.error === "string" ? r.error : "",
    contextTruncated: r.context_truncated === true,
    resultTruncated: r.result_truncated === true,
  };
}

/** A role's max tool rounds and deadline (seconds), for "used of max", and its name. */
export type RoleLimits = { rounds: number; deadline: number; label: string };

/** The roles' names in English (the backend's labels are Chinese). */
const LABELS_EN: Readonly<Record<string, string>> = {
  research: "Research agent",
  analysis: "Analysis agent",
  trading: "Trading agent",
};

export function roleLabel(role: string, limits: RoleLimits | null, zh: boolean): string {
  return (zh ? limits?.label : LABELS_EN[role]) ?? limits?.label ?? role;
}

let roleLimits: Promise<Record<string, RoleLimits>> | null = null;

/** Every role's limits, from the backend's governance table (asked once; a failed ask is
 * asked again by the next pane). */
export function loadRoleLimits(): Promise<Record<string, RoleLimits>> {
  if (roleLimits === null) {
    const asked = Promise.resolve()
      .then(() => commands.subAgentRoles())
      .then((roles) =>
        Object.fromEntries(roles.map((r) => [r.name, { rounds: r.max_tool_rounds, deadline: r.deadline_secs, label: r.label }])),
      );
    roleLimits = asked;
    asked.catch((e: unknown) => {
      console.warn("sub_agent_roles failed", e);
      if (roleLimits === asked) roleLimits = null;
    });
  }
  return roleLimits;
}

/** `role`'s limits once the backend has said them (null until then, or for an unknown role). */
export function useRoleLimits(role: string): RoleLimits | null {
  const [limits, setLimits] = useState<RoleLimits | null>(null);
  useEffect(() => {
    let live = true;
    loadRoleLimits().then(
      (all) => {
        if (live) setLimits(all[role] ?? null);
      },
      () => {},
    );
    return () => {
      live = false;
    };
  }, [role]);
  return limits;
}

/** The pane's elapsed time: the result's own figure once there is one; while the
 * sub-agent runs, whole seconds since its call started; otherwise unknown ("…"). */
export function paneElapsed(outcomeElapsed: number | null, running: boolean, startedAt: number | undefined, now: number): string {
  if (outcomeElapsed !== null) return `${outcomeElapsed.toFixed(1)}s`;
  if (running && startedAt !== undefined) return `${Math.max(0, Math.floor((now - startedAt) / 1000))}s`;
  return "…";
}

export function roleOf(tool: string): string {
  return tool.replace(/^delegate_to_/, "");
}
