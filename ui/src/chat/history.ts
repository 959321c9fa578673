// Turns stored messages into the items the transcript shows.
import type { ApprovalNotice, Grounding, Message, SkillUse, SubAgentStep, TaskNotice, Value } from "../bindings";
import type { ToolCard } from "./reducer";
import { isDelegate, paneFromSteps, roleOf } from "./subagent";
import { toolDisplayName, toolErrorText } from "./toolNames";

/** The fork point before a conversation's first message (the store's seqs start at 1). */
export const BEFORE_FIRST = 0;

/** `seq` is the stored message's id (what a fork is taken at); a user message also has
 * `forkBefore`, the seq of the message before it (0 for the first: the fork then starts
 * empty, still naming its source): editing it forks there. */
export type HistoryItem =
  | {
      kind: "user";
      id: string;
      seq: number;
      forkBefore: number;
      text: string;
      interrupted: boolean;
      skill?: { name: string; expansion: string };
    }
  | { kind: "system"; id: string; seq: number; notice: TaskNotice | null; approval: ApprovalNotice | null; interrupted: boolean }
  | { kind: "answer"; id: string; seq: number; text: string; interrupted: boolean; grounding?: Grounding | null }
  | ToolCard;

const BEIJING = /\n*\[当前北京时间：[^\]]*\]\s*$/;

/** The user's words without the Beijing time line the session appends. */
export function stripBeijingTime(text: string): string {
  return text.replace(BEIJING, "");
}

function parseResult(content: string): Value {
  try {
    return JSON.parse(content) as Value;
  } catch {
    return content;
  }
}

export function historyItems(
  // `seq` is absent only in tests' fixtures: then a message's position (1, 2, …) stands in.
  messages: {
    seq?: number;
    message: Message;
    interrupted: boolean;
    skill?: SkillUse | null;
    sub_agent?: SubAgentStep[];
    task_notice?: TaskNotice | null;
    approval_notice?: ApprovalNotice | null;
    grounding?: Grounding | null;
  }[],
): HistoryItem[] {
  const out: HistoryItem[] = [];
  const cards = new Map<string, ToolCard>();
  const seqOf = (i: number) => messages[i].seq ?? i + 1;
  messages.forEach(({ message: m, interrupted, skill, sub_agent, task_notice, approval_notice, grounding }, i) => {
    const seq = seqOf(i);
    if (m.role === "user") {
      const origin = m.origin ?? "user";
      const forkBefore = i > 0 ? seqOf(i - 1) : BEFORE_FIRST;
      if (origin === "user" && skill)
        // What was typed is shown; the expansion the model got stays one click away.
        out.push({ kind: "user", id: `h-${i}`, seq, forkBefore, text: skill.typed, interrupted, skill: { name: skill.name, expansion: stripBeijingTime(m.content) } });
      else if (origin === "user") out.push({ kind: "user", id: `h-${i}`, seq, forkBefore, text: stripBeijingTime(m.content), interrupted });
      // Worded from its stored notice, never from the text the model read.
      else if (origin === "system_notification") out.push({ kind: "system", id: `h-${i}`, seq, notice: task_notice ?? null, approval: approval_notice ?? null, interrupted });
    } else if (m.role === "assistant") {
      for (const c of m.tool_calls ?? []) {
        const card: ToolCard = {
          kind: "tool",
          id: c.id,
          name: c.name,
          displayName: toolDisplayName(c.name),
          args: c.args,
          status: interrupted ? "interrupted" : "pending",
          elapsedMs: null,
          result: null,
          error: null,
          approval: null,
        };
        cards.set(c.id, card);
        out.push(card);
      }
      if ((m.content ?? "").trim() !== "" && (m.tool_calls ?? []).length === 0) {
        out.push({ kind: "answer", id: `h-${i}`, seq, text: m.content ?? "", interrupted, grounding: grounding ?? null });
      }
    } else {
      const card = cards.get(m.tool_call_id);
      if (card) {
        if (m.is_error) {
          card.status = "error";
          card.error = toolErrorText(m.content);
        } else {
          card.status = "ok";
          card.result = parseResult(m.content);
        }
        // A delegate call's sub-agent: its tool rows come back from the stored steps.
        if (isDelegate(card.name) && sub_agent && sub_agent.length > 0) card.sub = paneFromSteps(roleOf(card.name), sub_agent);
      }
    }
  });
  return out;
}
