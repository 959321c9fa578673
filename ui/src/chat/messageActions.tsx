// Actions on the transcript's stored messages: fork from here, edit a
// user message, regenerate the last answer. Each makes a new conversation with a fork of
// the history; the conversation shown is never changed.
import type { ForkedFrom } from "../bindings";
import type { MessageKey } from "../i18n";
import { BEFORE_FIRST, type HistoryItem } from "./history";

export type MessageAction = "fork" | "edit" | "regenerate";

type UserItem = Extract<HistoryItem, { kind: "user" }>;

/** What "Regenerate" redoes: the last user message, forked before and sent again, and
 * the answer that offers it (the last one, answering that message). Null when there is
 * no such pair. */
export function regenerateTarget(items: HistoryItem[]): { answerId: string; user: UserItem } | null {
  let user: UserItem | null = null;
  let answerId: string | null = null;
  for (const it of items) {
    if (it.kind === "user") {
      user = it;
      answerId = null;
    } else if (it.kind === "system") {
      // A completion turn came after it: regenerating would drop that turn.
      user = null;
      answerId = null;
    } else if (it.kind === "answer" && user) {
      answerId = it.id;
    }
  }
  if (!user || answerId === null) return null;
  return { answerId, user };
}

/** The actions a stored message offers: every message can be forked from; a user message
 * can be edited (the fork is taken just before it, the first one's before everything);
 * the answer named by `regenerateOn` can be regenerated. Tool calls keep their own card. */
export function actionsFor(item: HistoryItem, regenerateOn: string | null): MessageAction[] {
  if (item.kind === "tool") return [];
  const out: MessageAction[] = ["fork"];
  if (item.kind === "user") out.push("edit");
  if (item.kind === "answer" && item.id === regenerateOn) out.push("regenerate");
  return out;
}

type T = (key: MessageKey, vars?: Record<string, string | number>) => string;

/** "Forked from …" for a fork's header and list row; `sourceTitle` is null when the
 * source is no longer listed (deleted). */
export function forkOriginText(origin: ForkedFrom, sourceTitle: string | null, t: T): string {
  const start = origin.message_seq === BEFORE_FIRST;
  if (sourceTitle === null) return start ? t("forkedFromGoneStart") : t("forkedFromGone", { n: origin.message_seq });
  const title = sourceTitle || t("chatUntitled");
  return start ? t("forkedFromStart", { title }) : t("forkedFrom", { title, n: origin.message_seq });
}

const LABELS: Record<MessageAction, MessageKey> = {
  fork: "msgFork",
  edit: "msgEdit",
  regenerate: "msgRegenerate",
};

/** The row of buttons under a message. Disabled while a turn runs in the conversation
 * (the app runs one turn at a time there). */
export function MessageActions({
  actions,
  busy,
  t,
  onAction,
}: {
  actions: MessageAction[];
  busy: boolean;
  t: T;
  onAction: (a: MessageAction) => void;
}) {
  if (actions.length === 0) return null;
  return (
    <div className="msg-actions">
      {actions.map((a) => (
        <button
          key={a}
          type="button"
          className={`msg-${a}`}
          disabled={busy}
          title={busy ? t("msgActionsBusy") : undefined}
          onClick={() => onAction(a)}
        >
          {t(LABELS[a])}
        </button>
      ))}
    </div>
  );
}
