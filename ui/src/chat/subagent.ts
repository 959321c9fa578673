// A sub-agent's pane inside its delegate tool card: what its `sub_agent` events say while
// it works (dimmed text, its tool calls with ✓/✗ and time), then the structured result
// (status, rounds, policy). Pure, so recorded events replay in tests; a reopened
// conversation has only the stored result, which the pane shows the same way.
import type { Value } from "../bindings";

export type SubTool = { name: string; status: "running" | "ok" | "error"; ms: number | null; error: string | null };

export type SubAgentPane = {
  agent: string;
  text: string;
  tools: SubTool[];
  failed: string | null;
};

export function isDelegate(tool: string): boolean {
  return tool.startsWith("delegate_to_");
}

export function emptyPane(agent: string): SubAgentPane {
  return { agent, text: "", tools: [], failed: null };
}

/** Folds one `sub_agent` event (kind: text | tool_start | tool_result | tool_error | done | failed | retry | warning). */
export function reducePane(pane: SubAgentPane, kind: string, text: string): SubAgentPane {
  switch (kind) {
    case "text":
      return { ...pane, text: pane.text + text };
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
    elapsed: typeof r.elapsed === "number" ? r.elapsed : null,
    toolCalls: Array.isArray(r.tool_calls) ? r.tool_calls.filter((t): t is string => typeof t === "string") : [],
    nextAction: typeof policy.next_action === "string" ? policy.next_action : "",
    instruction: typeof policy.instruction === "string" ? policy.instruction : "",
    error: typeof r.error === "string" ? r.error : "",
    contextTruncated: r.context_truncated === true,
    resultTruncated: r.result_truncated === true,
  };
}

/** Max tool rounds and deadline (seconds) of each role (seed 11_07), for "used of max". */
export const ROLE_LIMITS: Readonly<Record<string, { rounds: number; deadline: number; label: string; labelEn: string }>> = {
  research: { rounds: 8, deadline: 240, label: "研究 agent", labelEn: "Research agent" },
  analysis: { rounds: 8, deadline: 180, label: "分析 agent", labelEn: "Analysis agent" },
  trading: { rounds: 6, deadline: 120, label: "交易 agent", labelEn: "Trading agent" },
};

export function roleOf(tool: string): string {
  return tool.replace(/^delegate_to_/, "");
}
