// The stream reducer: folds the RuntimeEvents of one turn into what the chat view shows.
// Pure — no React, no IPC — so recorded event sequences can be replayed in tests.
import type {
  Grounding,
  ApprovalRequest,
  ErrorKind,
  RecalledItem,
  Value,
  RuntimeEvent,
  TaskNotice,
  ApprovalNotice,
  Tier,
  Usage,
} from "../bindings";
import { toolDisplayName } from "./toolNames";
import { emptyPane, reducePane, type SubAgentPane } from "./subagent";

export type ToolStatus = "pending" | "running" | "ok" | "error" | "interrupted";

export interface ToolCard {
  kind: "tool";
  id: string;
  name: string;
  displayName: string;
  args: Value;
  status: ToolStatus;
  elapsedMs: number | null;
  result: Value | null;
  error: string | null;
  /** How an approval for this call was answered ("allow_once", "deny", "timeout", …). */
  approval: string | null;
  /** A delegate call's sub-agent: live from its events, or rebuilt from the steps stored
   * with its result when a conversation is reopened. */
  sub?: SubAgentPane;
  /** When its `tool_start` arrived (ms since the epoch; live turns only): a running
   * sub-agent's pane counts its elapsed time from it. */
  startedAt?: number;
}

/** Text shown in the transcript. Only whole lines are "committed"; the partial last line
 * is the live tail, shown too but re-rendered on every delta. */
export interface TextItem {
  kind: "text";
  id: string;
  committed: string;
  tail: string;
  /** True once the round that produced it is over (kept text or the final answer). */
  closed: boolean;
  final: boolean;
  /** On the final answer: where its numbers and codes came from. */
  grounding?: Grounding | null;
}

export type NoticeLevel = "retry" | "fallback" | "warning" | "compaction";

export interface NoticeItem {
  kind: "notice";
  id: string;
  level: NoticeLevel;
  text: string;
}

/** A finished background task's notice, where it joined the turn. */
export interface TaskNoticeItem {
  kind: "task_notice";
  id: string;
  notice: TaskNotice;
}

/** A decided approval-inbox call's notice, where it joined the turn. */
export interface ApprovalNoticeItem {
  kind: "approval_notice";
  id: string;
  notice: ApprovalNotice;
}

export type TurnItem = TextItem | ToolCard | NoticeItem | TaskNoticeItem | ApprovalNoticeItem;

export type Terminal =
  | { kind: "done"; text: string; elapsedMs: number }
  | { kind: "cancelled" }
  | { kind: "failed"; errorKind: ErrorKind; message: string };

export interface ModelInfo {
  round: number;
  provider: string;
  model: string;
  tier: Tier | null;
}

/** The model a round's tokens are billed to: from `model_start`; after an in-stream
 * fallback only the provider is known until the next `model_start`. */
export interface BilledModel {
  provider: string;
  model: string | null;
}

/** One `usage` event: the round's own tokens and the model that used them. */
export interface RoundUsage {
  round: number;
  billed: BilledModel | null;
  usage: Usage;
}

export type Phase = "waiting" | "thinking" | "streaming" | "tools" | "finished";

export interface TurnView {
  items: TurnItem[];
  /** Reasoning text, collected silently; shown as a collapsible 💭 summary. */
  thinking: string;
  /** Approval requests waiting for the user, oldest first. */
  approvals: ApprovalRequest[];
  model: ModelInfo | null;
  /** Totals for this turn (the runtime's running sum). */
  usage: Usage;
  /** Per-round usage with the model of each round (cost estimates: a router may switch
   * models between rounds). */
  rounds: RoundUsage[];
  /** The model serving the current round. */
  billed: BilledModel | null;
  /** Number of retries seen (⚠) and whether a fallback took over (⚡). */
  retries: number;
  fallback: { from: string; to: string; reason: string } | null;
  phase: Phase;
  terminal: Terminal | null;
  sessionId: string | null;
  /** Long-term memories recalled for this turn (shown under its reply); empty when none. */
  recalled: RecalledItem[];
  /** Events ignored because they arrived after the terminal one. */
  ignoredAfterTerminal: number;
}

export const emptyUsage = (): Usage => ({
  input_tokens: 0,
  output_tokens: 0,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
});

export function initialTurn(): TurnView {
  return {
    items: [],
    thinking: "",
    approvals: [],
    model: null,
    usage: emptyUsage(),
    rounds: [],
    billed: null,
    retries: 0,
    fallback: null,
    phase: "waiting",
    terminal: null,
    sessionId: null,
    recalled: [],
    ignoredAfterTerminal: 0,
  };
}

/** Whole text of a text item as the user sees it (committed lines + live tail). */
export function itemText(item: TextItem): string {
  return item.committed + item.tail;
}

/** The text item of the current round, if any (at most one is open at a time). */
function openText(items: TurnItem[]): TextItem | null {
  for (let i = items.length - 1; i >= 0; i--) {
    const it = items[i];
    if (it.kind === "text" && !it.closed) return it;
  }
  return null;
}

function replaceItem(items: TurnItem[], id: string, next: TurnItem | null): TurnItem[] {
  return items.flatMap((it) => (it.id === id ? (next ? [next] : []) : [it]));
}

/** Drops the text streamed in the current round (a plan, or a failed attempt). */
function discardOpenText(items: TurnItem[]): TurnItem[] {
  const open = openText(items);
  return open ? replaceItem(items, open.id, null) : items;
}

function closeOpenText(items: TurnItem[]): TurnItem[] {
  const open = openText(items);
  if (!open) return items;
  return replaceItem(items, open.id, { ...open, committed: itemText(open), tail: "", closed: true });
}

function appendText(items: TurnItem[], delta: string, seq: number): TurnItem[] {
  const open = openText(items);
  const base: TextItem = open ?? {
    kind: "text",
    id: `text-${seq}`,
    committed: "",
    tail: "",
    closed: false,
    final: false,
  };
  const buffered = base.tail + delta;
  const cut = buffered.lastIndexOf("\n");
  const next: TextItem =
    cut < 0
      ? { ...base, tail: buffered }
      : { ...base, committed: base.committed + buffered.slice(0, cut + 1), tail: buffered.slice(cut + 1) };
  return open ? replaceItem(items, open.id, next) : [...items, next];
}

function updateTool(items: TurnItem[], id: string, f: (t: ToolCard) => ToolCard): TurnItem[] {
  let found = false;
  const next = items.map((it) => {
    if (it.kind === "tool" && it.id === id) {
      found = true;
      return f(it);
    }
    return it;
  });
  return found ? next : items;
}

function newTool(id: string, name: string, args: Value, displayName?: string): ToolCard {
  return {
    kind: "tool",
    id,
    name,
    displayName: displayName || toolDisplayName(name),
    args,
    status: "pending",
    elapsedMs: null,
    result: null,
    error: null,
    approval: null,
  };
}

function notice(items: TurnItem[], level: NoticeLevel, text: string, seq: number): TurnItem[] {
  return [...items, { kind: "notice", id: `notice-${seq}`, level, text }];
}

function finishTools(items: TurnItem[]): TurnItem[] {
  return items.map((it) =>
    it.kind === "tool" && (it.status === "pending" || it.status === "running")
      ? { ...it, status: "interrupted" as const }
      : it,
  );
}

/**
 * Folds one event into the view. `seq` is the event's index in the turn and only feeds
 * item ids; `now` (ms since the epoch) is when the event arrived, kept as a tool's start. After the terminal event (`done`, `turn_cancelled`, `turn_failed`) every
 * further event is ignored, so a turn has exactly one terminal state.
 */
export function reduceTurn(view: TurnView, event: RuntimeEvent, seq = 0, now?: number): TurnView {
  if (view.terminal) {
    return { ...view, ignoredAfterTerminal: view.ignoredAfterTerminal + 1 };
  }
  switch (event.type) {
    case "session":
      return { ...view, sessionId: event.session_id };
    case "model_start":
      return {
        ...view,
        model: { round: event.round, provider: event.provider, model: event.model, tier: event.tier ?? null },
        billed: { provider: event.provider, model: event.model },
        phase: "thinking",
      };
    case "text_delta":
      if (event.text === "") return view;
      return { ...view, items: appendText(view.items, event.text, seq), phase: "streaming" };
    case "thinking_delta":
      return { ...view, thinking: view.thinking + event.text, phase: "thinking" };
    case "tool_calls": {
      const items = event.discard_text ? discardOpenText(view.items) : closeOpenText(view.items);
      const known = new Set(items.filter((i) => i.kind === "tool").map((i) => i.id));
      const cards = event.calls.filter((c) => !known.has(c.id)).map((c) => newTool(c.id, c.name, c.args));
      return { ...view, items: [...items, ...cards], phase: "tools" };
    }
    case "tool_start": {
      const start = (t: ToolCard): ToolCard => ({
        ...t,
        displayName: event.display_name || toolDisplayName(t.name),
        args: event.args,
        status: "running",
        ...(now !== undefined ? { startedAt: now } : {}),
      });
      const exists = view.items.some((i) => i.kind === "tool" && i.id === event.id);
      const items = exists
        ? updateTool(view.items, event.id, start)
        : [...closeOpenText(view.items), start(newTool(event.id, event.name, event.args))];
      return { ...view, items, phase: "tools" };
    }
    case "tool_result":
      return {
        ...view,
        items: updateTool(view.items, event.id, (t) => ({
          ...t,
          status: "ok",
          elapsedMs: event.elapsed_ms,
          result: event.result,
        })),
      };
    case "tool_error":
      return {
        ...view,
        items: updateTool(view.items, event.id, (t) => ({ ...t, status: "error", error: event.error })),
      };
    case "approval_request": {
      const rest = view.approvals.filter((a) => a.id !== event.request.id);
      const exists = view.items.some((i) => i.kind === "tool" && i.id === event.request.id);
      const items = exists
        ? updateTool(view.items, event.request.id, (t) => ({ ...t, displayName: event.request.display_name }))
        : [
            ...closeOpenText(view.items),
            newTool(event.request.id, event.request.tool, event.request.args, event.request.display_name),
          ];
      return { ...view, items, approvals: [...rest, event.request] };
    }
    case "approval_resolved":
      return {
        ...view,
        approvals: view.approvals.filter((a) => a.id !== event.id),
        items: updateTool(view.items, event.id, (t) => ({ ...t, approval: event.outcome })),
      };
    case "retry":
      // The runtime retries the round: whatever it streamed is dropped.
      return {
        ...view,
        items: notice(discardOpenText(view.items), "retry", event.reason, seq),
        retries: view.retries + 1,
      };
    case "fallback": {
      const base = event.discard_text ? discardOpenText(view.items) : view.items;
      return {
        ...view,
        items: notice(base, "fallback", `${event.from} → ${event.to}: ${event.reason}`, seq),
        fallback: { from: event.from, to: event.to, reason: event.reason },
        // Until a model_start says otherwise, the provider that took over bills the round.
        billed: { provider: event.to, model: null },
      };
    }
    case "usage":
      return {
        ...view,
        usage: event.turn,
        rounds: [...view.rounds, { round: event.round, billed: view.billed, usage: event.usage }],
      };
    case "compaction":
      return {
        ...view,
        items: notice(view.items, "compaction", `${event.before_messages} → ${event.after_messages}`, seq),
      };
    case "memory_recall":
      // One per turn, before the first model call; kept whole for the disclosure under
      // the reply rather than shown as a notice in the stream.
      return { ...view, recalled: [...view.recalled, ...event.items.filter((m) => !view.recalled.some((r) => r.id === m.id))] };
    case "warning":
      return { ...view, items: notice(view.items, "warning", event.message, seq) };
    case "sub_agent":
      return {
        ...view,
        items: updateTool(view.items, event.call_id, (t) => ({
          ...t,
          sub: reducePane(t.sub ?? emptyPane(event.agent), event.kind, event.text),
        })),
      };
    case "background_task":
    case "decision_sizes":
      return view;
    case "task_notice":
      return { ...view, items: [...closeOpenText(view.items), { kind: "task_notice", id: `notice-${seq}`, notice: event.notice }] };
    case "approval_notice":
      return { ...view, items: [...closeOpenText(view.items), { kind: "approval_notice", id: `approval-${seq}`, notice: event.notice }] };
    case "done": {
      // The final answer replaces whatever was streamed for it (same text, now whole).
      const items = discardOpenText(view.items);
      const final: TextItem = {
        kind: "text",
        id: `text-${seq}`,
        committed: event.text,
        tail: "",
        closed: true,
        final: true,
        grounding: event.grounding ?? null,
      };
      return {
        ...view,
        items: finishTools(event.text === "" ? items : [...items, final]),
        approvals: [],
        phase: "finished",
        terminal: { kind: "done", text: event.text, elapsedMs: event.elapsed_ms },
      };
    }
    case "turn_cancelled":
      return {
        ...view,
        items: finishTools(closeOpenText(view.items)),
        approvals: [],
        phase: "finished",
        terminal: { kind: "cancelled" },
      };
    case "turn_failed":
      return {
        ...view,
        items: finishTools(closeOpenText(view.items)),
        approvals: [],
        phase: "finished",
        terminal: { kind: "failed", errorKind: event.kind, message: event.message },
      };
  }
}

/** Replays a whole recorded sequence. */
export function replay(events: RuntimeEvent[]): TurnView {
  return events.reduce<TurnView>((v, e, i) => reduceTurn(v, e, i), initialTurn());
}

/** Adds two usage records (conversation totals in the status bar). */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cache_read_tokens: (a.cache_read_tokens ?? 0) + (b.cache_read_tokens ?? 0),
    cache_write_tokens: (a.cache_write_tokens ?? 0) + (b.cache_write_tokens ?? 0),
  };
}

/** One-line 💭 summary of the reasoning: its first line, shortened. */
export function thinkingSummary(thinking: string, max = 60): string {
  const first = thinking.trim().split("\n")[0] ?? "";
  return first.length > max ? `${first.slice(0, max)}…` : first;
}

/**
 * Splits streamed Markdown into finished blocks (ended by a blank line outside a code
 * fence) and the live tail, so finished blocks are rendered once and only the tail is
 * re-rendered while text streams in.
 */
export function splitBlocks(text: string): { blocks: string[]; tail: string } {
  const blocks: string[] = [];
  let start = 0;
  let inFence = false;
  let pos = 0;
  while (pos < text.length) {
    const nl = text.indexOf("\n", pos);
    if (nl < 0) break;
    const line = text.slice(pos, nl);
    const trimmed = line.trimStart();
    if (trimmed.startsWith("```") || trimmed.startsWith("~~~")) {
      inFence = !inFence;
    } else if (!inFence && line.trim() === "" && text.slice(start, pos).trim() !== "") {
      blocks.push(text.slice(start, nl + 1));
      start = nl + 1;
    }
    pos = nl + 1;
  }
  return { blocks, tail: text.slice(start) };
}
