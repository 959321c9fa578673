import { useCallback, useEffect, useReducer, useRef, useState } from "react";
import {
  commands,
  events,
  type ApprovalDecision,
  type CommandError,
  type ConversationHistory,
  type ConversationEvent,
  type ConversationSummary,
  type RuntimeEvent,
  type SearchHit,
  type SkillView,
  type Usage,
} from "../bindings";
import { chatErrorText, errorKindLabel } from "../format";
import { useT } from "../i18n";
import ApprovalDialog from "./ApprovalDialog";
import GroundingLine from "./GroundingLine";
import Markdown, { type RenderFn } from "./Markdown";
import RecallDisclosure from "./RecallDisclosure";
import StatusBar from "./StatusBar";
import TaskNoticeLine from "./TaskNoticeLine";
import ApprovalNoticeLine from "./ApprovalNoticeLine";
import ToolCardView from "./ToolCardView";
import { conversationCost, turnCost, type PricingSettings } from "./cost";
import { historyItems, type HistoryItem } from "./history";
import { MessageActions, actionsFor, forkOriginText, regenerateTarget, type MessageAction } from "./messageActions";
import SlashPalette, { PALETTE_ID, optionId } from "./SlashPalette";
import { commandWord, filterSkills, slashQuery, unknownCommand } from "./slash";
import { useStickToBottom } from "./stickToBottom";
import { addUsage, emptyUsage, initialTurn, itemText, reduceTurn, thinkingSummary, type TurnView } from "./reducer";

const renderMd: RenderFn = (text) => commands.renderMarkdown(text);

interface LiveTurn {
  key: number;
  userText: string;
  /** The skill `/name` the text runs as. */
  skill?: string;
  /** A follow-up turn the app ran on a background-task completion: no words of the
   * user's; its notice shows inside it. */
  system?: boolean;
  view: TurnView;
  seq: number;
}

type LiveAction =
  | { type: "start"; key: number; userText: string; system?: boolean; skill?: string }
  | { type: "event"; key: number; event: RuntimeEvent; at?: number }
  | { type: "clear" };

function liveReducer(state: LiveTurn[], a: LiveAction): LiveTurn[] {
  switch (a.type) {
    case "start":
      return [...state, { key: a.key, userText: a.userText, system: a.system, skill: a.skill, view: initialTurn(), seq: 0 }];
    case "event":
      return state.map((t) => (t.key === a.key ? { ...t, view: reduceTurn(t.view, a.event, t.seq, a.at), seq: t.seq + 1 } : t));
    case "clear":
      return [];
  }
}

function errorText(e: CommandError): string {
  return e.kind === "busy" ? "busy" : e.message;
}

/** `onRegenerate` is set on the last turn when its answer can be regenerated. */
function TurnBlock({ turn, onRegenerate }: { turn: LiveTurn; onRegenerate?: () => void }) {
  const t = useT();
  const v = turn.view;
  return (
    <div className="turn">
      {!turn.system && (
        <div className="msg user">
          {turn.userText}
          {turn.skill && <div className="skill-mark">⚡ {t("skillExpandedBy", { name: turn.skill })}</div>}
        </div>
      )}
      {v.thinking !== "" && (
        <details className="thinking">
          <summary>💭 {thinkingSummary(v.thinking)}</summary>
          <pre>{v.thinking}</pre>
        </details>
      )}
      {v.items.map((it) =>
        it.kind === "tool" ? (
          <ToolCardView key={it.id} card={it} />
        ) : it.kind === "task_notice" ? (
          <TaskNoticeLine key={it.id} notice={it.notice} />
        ) : it.kind === "approval_notice" ? (
          <ApprovalNoticeLine key={it.id} notice={it.notice} />
        ) : it.kind === "notice" ? (
          <div key={it.id} className={`turn-notice notice-${it.level}`}>
            {it.level === "fallback" ? "⚡" : it.level === "compaction" ? "📦" : "⚠"} {it.text}
          </div>
        ) : (
          <div key={it.id} className={`msg assistant${it.final ? " final" : " streaming"}`}>
            <Markdown text={itemText(it)} render={renderMd} grounding={it.final ? it.grounding : null} />
            {it.final && <GroundingLine grounding={it.grounding} />}
          </div>
        ),
      )}
      <RecallDisclosure items={v.recalled} />
      {!v.terminal && (v.phase === "waiting" || v.phase === "thinking") && <div className="hint thinking-now">{t("chatThinking")}</div>}
      {v.terminal?.kind === "done" && onRegenerate && (
        <MessageActions actions={["regenerate"]} busy={false} t={t} onAction={onRegenerate} />
      )}
      {v.terminal?.kind === "done" && <div className="hint turn-end">✓ {(v.terminal.elapsedMs / 1000).toFixed(1)}s</div>}
      {v.terminal?.kind === "cancelled" && <div className="hint turn-end">{t("chatCancelled")}</div>}
      {v.terminal?.kind === "failed" && (
        <div className="error turn-end">
          ✗ {errorKindLabel(v.terminal.errorKind, t)}: {v.terminal.message}
        </div>
      )}
    </div>
  );
}

// Inline icons: emoji such as 🗑 are missing from common Linux fonts and render as boxes.
function TrashIcon() {
  return (
    <svg className="icon" viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false">
      <path
        d="M2.5 4h11M6 4V2.5h4V4M4 4l.7 9.5h6.6L12 4M6.8 6.5v5M9.2 6.5v5"
        fill="none"
        stroke="currentColor"
        strokeWidth="1.3"
        strokeLinecap="round"
        strokeLinejoin="round"
      />
    </svg>
  );
}

function PencilIcon() {
  return (
    <svg className="icon" viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false">
      <path d="M10.5 2.5l3 3L5.5 13.5 2 14l.5-3.5 8-8zM9 4l3 3" fill="none" stroke="currentColor" strokeWidth="1.3" strokeLinecap="round" strokeLinejoin="round" />
    </svg>
  );
}

const NO_PRICES: PricingSettings = { models: [], light_model: null, fallback_models: [] };

export default function ChatPage({
  onOpenSettings,
  hasModel,
  settings = NO_PRICES,
  active = true,
  prefill,
  show,
}: {
  onOpenSettings: () => void;
  hasModel: boolean;
  /** False while another page is shown: the chat stays mounted but hidden, without its
   * keyboard shortcuts (an approval request still shows its dialog). */
  active?: boolean;
  /** For the cost estimate (model prices). */
  settings?: PricingSettings;
  /** Text put in the composer (e.g. "ask the agent" on the stock page); a new object each time. */
  prefill?: { text: string };
  /** A conversation to switch to (a task's notification or the tray); a new object each time. */
  show?: { id: string };
}) {
  const t = useT();
  const [list, setList] = useState<ConversationSummary[]>([]);
  const [query, setQuery] = useState("");
  const [hits, setHits] = useState<SearchHit[] | null>(null);
  const [currentId, setCurrentId] = useState<string | null>(null);
  const [history, setHistory] = useState<ConversationHistory | null>(null);
  const [live, dispatch] = useReducer(liveReducer, []);
  const [input, setInput] = useState("");
  useEffect(() => {
    if (prefill) setInput(prefill.text);
  }, [prefill]);
  const [error, setError] = useState<CommandError | null>(null);
  const [allowed, setAllowed] = useState<string[]>([]);
  const [renaming, setRenaming] = useState<string | null>(null);
  const [exported, setExported] = useState<string | null>(null);
  /** The user message being edited (its item id) and the edited text. */
  const [editing, setEditing] = useState<{ id: string; text: string } | null>(null);
  const composer = useRef<HTMLTextAreaElement>(null);
  const transcript = useRef<HTMLDivElement>(null);
  // The `/` palette: skills are read again each time it opens (files may have changed).
  const [skills, setSkills] = useState<SkillView[] | null>(null);
  const [paletteIndex, setPaletteIndex] = useState(0);
  const [paletteClosed, setPaletteClosed] = useState(false);
  const [composerError, setComposerError] = useState<string | null>(null);
  // null when the list could not be read: then the backend alone judges a `/word`.
  const loadSkills = useCallback(async (): Promise<SkillView[] | null> => {
    const r = await commands.listSkills();
    const list = r.status === "ok" ? r.data.skills : null;
    setSkills(list);
    return list;
  }, []);
  const slash = slashQuery(input);
  const paletteOpen = slash !== null && !paletteClosed;
  const matches = paletteOpen && skills ? filterSkills(skills, slash) : [];
  const slashing = slash !== null;
  useEffect(() => {
    if (slashing) void loadSkills();
  }, [slashing, loadSkills]);
  useEffect(() => setPaletteIndex(0), [slash]);
  const pick = (s: SkillView) => {
    setInput(`/${s.name} `);
    setPaletteClosed(true);
    setComposerError(null);
    composer.current?.focus();
  };
  const keySeq = useRef(0);

  const running = live.some((l) => !l.view.terminal);
  // For callbacks that run after a render: whether a turn is live, whether the page is shown.
  const runningRef = useRef(running);
  runningRef.current = running;
  const activeRef = useRef(active);
  activeRef.current = active;
  const lastTurn = live.length ? live[live.length - 1].view : null;
  const pending = lastTurn?.approvals[0] ?? null;
  const convUsage: Usage = live.reduce((u, l) => addUsage(u, l.view.usage), history?.usage ?? emptyUsage());
  const lastCost = lastTurn ? turnCost(lastTurn, settings) : null;
  const convCost = conversationCost(history, live.map((l) => l.view), settings);

  const refreshList = useCallback(async () => {
    const r = await commands.listConversations();
    if (r.status === "ok") setList(r.data);
  }, []);

  useEffect(() => {
    void refreshList();
  }, [refreshList]);

  // The conversation shown, for callbacks that finish after the user moved on.
  const currentRef = useRef<string | null>(null);
  const setCurrent = (id: string | null) => {
    currentRef.current = id;
    setCurrentId(id);
  };

  // Every turn's events come app-wide (ConversationEvent), the user's and the follow-up
  // turns that answer background tasks alike: the window's own turns by the ref it sent,
  // the others when their conversation is the one shown.
  const turnKeys = useRef(new Map<number, number>());
  const ownTurns = useRef(new Map<string, { key: number; fromNew: boolean }>());
  const clientSeq = useRef(0);
  const windowRef = useRef(Math.random().toString(36).slice(2));
  /** Leaving the conversation shown: its live turns go (they are stored; reopening
   * shows them), and so does what routed events to them. */
  const clearLive = () => {
    dispatch({ type: "clear" });
    turnKeys.current.clear();
    ownTurns.current.clear();
  };
  /** Reloads the session's always-allowed tools (kept only if still in that conversation). */
  const refreshAllowed = useCallback(async (id: string) => {
    const tools = await commands.alwaysAllowed(id);
    if (currentRef.current === id) setAllowed(tools);
  }, []);

  /** The user leaves the conversation shown: its session ends and the backend extracts
   * long-term memories from it in the background (fire and forget). */
  const leave = (next: string | null) => {
    const prev = currentRef.current;
    if (prev !== null && prev !== next) {
      Promise.resolve(commands.endSession(prev)).catch((e: unknown) => console.warn("end_session failed", e));
    }
  };

  const open = useCallback(
    async (id: string) => {
      leave(id);
      clearLive();
      setError(null);
      setExported(null);
      setEditing(null);
      setHistory(null);
      setAllowed([]);
      setCurrent(id);
      const r = await commands.loadConversation(id);
      if (currentRef.current !== id) return;
      if (r.status === "ok") setHistory(r.data);
      else setError(r.error);
      await refreshAllowed(id);
    },
    [refreshAllowed],
  );

  /** The window shown again (back from the tray): the list and, when no turn is live here,
   * the open conversation are read again, so messages a chat bot or the CLI wrote while the
   * window was hidden appear. A live turn keeps what it streams. */
  const reloadShown = useCallback(async () => {
    void refreshList();
    const id = currentRef.current;
    if (id === null || runningRef.current) return;
    const r = await commands.loadConversation(id);
    if (currentRef.current !== id || runningRef.current || r.status !== "ok") return;
    clearLive();
    setHistory(r.data);
  }, [refreshList]);
  useEffect(() => {
    const onVisible = () => {
      if (document.visibilityState === "visible" && activeRef.current) void reloadShown();
    };
    document.addEventListener("visibilitychange", onVisible);
    return () => document.removeEventListener("visibilitychange", onVisible);
  }, [reloadShown]);
  // Fresh again whenever the page is shown: conversations started elsewhere (a chat bot
  // the app serves, the CLI on the same home) appear without a turn of this window's.
  useEffect(() => {
    if (active) void refreshList();
  }, [active, refreshList]);

  /** `end` is false when the conversation was deleted: nothing left to remember. */
  const newChat = useCallback((end = true) => {
    if (end) leave(null);
    clearLive();
    setCurrent(null);
    setHistory(null);
    setEditing(null);
    setAllowed([]);
    setError(null);
    composer.current?.focus();
  }, []);

  /** An unknown `/word` in `text`, said before anything is sent or forked (the backend
   * refuses it too); null when the text may be sent. */
  const slashError = useCallback(
    async (text: string): Promise<string | null> => {
      if (commandWord(text) === null) return null;
      const known = skills ?? (await loadSkills());
      const unknown = known && unknownCommand(text, known);
      return unknown ? t("slashUnknown", { name: unknown }) : null;
    },
    [skills, loadSkills, t],
  );

  /** Starts a turn with `text` in the conversation shown (a new one when none is). */
  const sendText = useCallback(async (text: string) => {
    setError(null);
    const word = commandWord(text);
    const key = ++keySeq.current;
    dispatch({ type: "start", key, userText: text, skill: word ?? undefined });
    const from = currentRef.current;
    const ref = `${windowRef.current}-${++clientSeq.current}`;
    ownTurns.current.set(ref, { key, fromNew: from === null });
    const r = await commands.startTurn(from, text, ref);
    if (r.status === "error") ownTurns.current.delete(ref);
    // The user may have opened another conversation meanwhile: stay there.
    if (currentRef.current !== from && (r.status === "error" || currentRef.current !== r.data.conversation_id)) return;
    if (r.status === "ok") {
      setCurrent(r.data.conversation_id);
      void refreshList();
    } else {
      setError(r.error);
      dispatch({ type: "event", key, event: { type: "turn_failed", kind: "internal", message: errorText(r.error) } });
    }
  }, [refreshList]);

  const send = useCallback(async () => {
    const text = input.trim();
    if (!text || running) return;
    const refused = await slashError(text);
    if (refused) {
      setComposerError(refused);
      return;
    }
    setComposerError(null);
    setInput("");
    await sendText(text);
  }, [input, running, slashError, sendText]);

  /** Forks the conversation shown at message `at` and opens the fork; with `text`, sends
   * it there as the fork's next turn. The conversation shown is never changed. */
  const forkAt = async (at: number, text?: string) => {
    const source = currentRef.current;
    if (!source || running) return;
    const r = await commands.forkConversation(source, at);
    if (currentRef.current !== source) return;
    if (r.status === "error") return setError(r.error);
    setEditing(null);
    await open(r.data.id);
    void refreshList();
    if (text !== undefined && currentRef.current === r.data.id) await sendText(text);
  };

  /** Regenerate: the last user message, read from the store (the answer may be a turn
   * of this visit, not reloaded yet), forked before and sent again. */
  const regenerate = async () => {
    const source = currentRef.current;
    if (!source || running) return;
    const r = await commands.loadConversation(source);
    if (r.status === "error") return setError(r.error);
    const target = regenerateTarget(historyItems(r.data.messages));
    if (!target) return;
    await forkAt(target.user.forkBefore, target.user.text);
  };

  const editSend = async (forkBefore: number) => {
    const text = editing?.text.trim() ?? "";
    if (!text) return;
    const refused = await slashError(text);
    if (refused) return setError({ kind: "invalid_input", message: refused, code: null });
    await forkAt(forkBefore, text);
  };

  const onMessageAction = (item: HistoryItem, action: MessageAction) => {
    if (item.kind === "tool") return;
    if (action === "fork") void forkAt(item.seq);
    else if (action === "edit" && item.kind === "user") setEditing({ id: item.id, text: item.text });
    else if (action === "regenerate") void regenerate();
  };

  const stop = useCallback(() => {
    if (currentId) void commands.cancelTurn(currentId);
  }, [currentId]);

  useEffect(() => {
    if (show && show.id !== currentRef.current) void open(show.id);
    // only when asked (a new object), not when `open` changes identity
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [show]);

  const onConversationEvent = useCallback(
    (p: ConversationEvent) => {
      let key = turnKeys.current.get(p.turn);
      if (key === undefined) {
        const own = p.client_ref === null ? undefined : ownTurns.current.get(p.client_ref);
        if (own) {
          key = own.key;
          // A new conversation's id, known from its first event (start_turn may answer later).
          if (own.fromNew && currentRef.current === null) setCurrent(p.conversation_id);
        } else if (p.kind === "follow_up" && p.conversation_id === currentRef.current) {
          key = ++keySeq.current;
          dispatch({ type: "start", key, userText: "", system: true });
        } else return;
        turnKeys.current.set(p.turn, key);
      }
      dispatch({ type: "event", key, event: p.event, at: Date.now() });
      const e = p.event;
      if (e.type === "done" || e.type === "turn_cancelled" || e.type === "turn_failed") {
        turnKeys.current.delete(p.turn);
        if (p.client_ref !== null) ownTurns.current.delete(p.client_ref);
        void refreshList();
        const id = currentRef.current;
        if (id) void refreshAllowed(id);
      }
    },
    [refreshList, refreshAllowed],
  );

  useEffect(() => {
    const unlisten = events.conversationEvent.listen(({ payload }) => onConversationEvent(payload));
    return () => {
      void unlisten.then((f) => f());
    };
  }, [onConversationEvent]);

  const decide = useCallback(
    async (decision: ApprovalDecision) => {
      if (!pending) return;
      await commands.answerApproval(pending.id, decision);
      if (currentId) await refreshAllowed(currentId);
    },
    [pending, currentId, refreshAllowed],
  );

  const revoke = useCallback(
    async (tool: string) => {
      const id = currentRef.current;
      if (!id) return;
      await commands.revokeAlwaysAllowed(id, tool);
      await refreshAllowed(id);
    },
    [refreshAllowed],
  );

  useEffect(() => {
    if (!active) return;
    const onKey = (e: KeyboardEvent) => {
      const mod = e.ctrlKey || e.metaKey;
      if (mod && e.key.toLowerCase() === "n") {
        e.preventDefault();
        newChat();
      } else if (mod && e.key.toLowerCase() === "l") {
        e.preventDefault();
        composer.current?.focus();
      } else if (e.key === "Escape" && running && !pending) {
        e.preventDefault();
        stop();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [newChat, stop, running, pending, active]);

  const doSearch = async (q: string) => {
    setQuery(q);
    if (q.trim() === "") return setHits(null);
    const r = await commands.searchConversations(q);
    setHits(r.status === "ok" ? r.data : []);
  };

  const rename = async (id: string, title: string) => {
    setRenaming(null);
    if (title.trim()) await commands.renameConversation(id, title);
    void refreshList();
  };

  const remove = async (id: string) => {
    const r = await commands.deleteConversation(id);
    if (r.status === "error") return setError(r.error);
    if (id === currentId) newChat(false);
    void refreshList();
  };

  const exportAs = async (format: "markdown" | "json") => {
    if (!currentId) return;
    const r = await commands.exportConversation(currentId, format);
    if (r.status === "ok") setExported(r.data);
    else setError(r.error);
  };

  const items = history ? historyItems(history.messages) : [];
  // Regenerate is offered on the last answer only: the stored one while no turn of this
  // visit follows it, else the last turn's (when it ran on the user's words).
  const storedRegenerate = live.length === 0 ? (regenerateTarget(items)?.answerId ?? null) : null;
  const lastLive = live.length ? live[live.length - 1] : null;
  // A conversation's first turn too: its fork starts before the first message (#0).
  const liveRegenerate = lastLive !== null && !lastLive.system && lastLive.view.terminal?.kind === "done";
  const origin = history?.conversation.forked_from ?? null;
  const titleOf = (id: string) => list.find((c) => c.id === id)?.title ?? null;
  // Follows streamed text and new turns; a reopened conversation opens at its end.
  useStickToBottom(transcript, history, live);

  return (
    <>
      <div className="chat" hidden={!active}>
        <aside className="conv-list" aria-label={t("chatConversations")}>
          <button id="chat-new" className="primary" onClick={() => newChat()} title="Ctrl+N">
            + {t("chatNew")}
          </button>
          <input id="chat-search" type="search" placeholder={t("chatSearch")} value={query} onChange={(e) => void doSearch(e.target.value)} />
          {hits ? (
            <ul className="convs" id="chat-search-results">
              {hits.map((h, i) => (
                <li key={`${h.conversation_id}-${i}`}>
                  <button onClick={() => void open(h.conversation_id)}>
                    <span className="conv-title">{h.conversation_title || t("chatUntitled")}</span>
                    <span className="hint">{h.snippet}</span>
                  </button>
                </li>
              ))}
              {hits.length === 0 && <li className="hint">{t("chatNoHits")}</li>}
            </ul>
          ) : (
            <ul className="convs" id="chat-conversations">
              {list.map((c) => (
                <li key={c.id} className={c.id === currentId ? "active" : ""} data-id={c.id}>
                  {renaming === c.id ? (
                    <input
                      className="conv-rename"
                      autoFocus
                      defaultValue={c.title}
                      onBlur={(e) => void rename(c.id, e.target.value)}
                      onKeyDown={(e) => {
                        if (e.key === "Enter") void rename(c.id, e.currentTarget.value);
                        if (e.key === "Escape") setRenaming(null);
                      }}
                    />
                  ) : (
                    <button className="conv-open" onClick={() => void open(c.id)} onDoubleClick={() => setRenaming(c.id)}>
                      {c.title || t("chatUntitled")}
                      {c.forked_from && (
                        <span className="hint conv-forked-from">{forkOriginText(c.forked_from, titleOf(c.forked_from.conversation_id), t)}</span>
                      )}
                    </button>
                  )}
                  <span className="conv-actions">
                    <button className="conv-rename-btn" title={t("chatRename")} aria-label={t("chatRename")} onClick={() => setRenaming(c.id)}>
                      <PencilIcon />
                    </button>
                    <button className="conv-delete" title={t("chatDelete")} aria-label={t("chatDelete")} onClick={() => void remove(c.id)}>
                      <TrashIcon />
                    </button>
                  </span>
                </li>
              ))}
            </ul>
          )}
        </aside>
        <section className="chat-main">
          {currentId && (
            <div className="chat-toolbar row">
              {origin && (
                <button
                  id="chat-forked-from"
                  className="link"
                  disabled={titleOf(origin.conversation_id) === null}
                  onClick={() => void open(origin.conversation_id)}
                >
                  {forkOriginText(origin, titleOf(origin.conversation_id), t)}
                </button>
              )}
              <button id="chat-export-md" onClick={() => void exportAs("markdown")}>{t("chatExportMd")}</button>
              <button id="chat-export-json" onClick={() => void exportAs("json")}>{t("chatExportJson")}</button>
              {exported && <span className="hint" id="chat-exported">{exported}</span>}
            </div>
          )}
          <div className="transcript" id="transcript" ref={transcript}>
            {!hasModel && live.length === 0 && (
              <div className="card notice" id="chat-no-model">
                <p>{t("homeNoModel")}</p>
                <button className="primary" onClick={onOpenSettings}>{t("homeGoSettings")}</button>
              </div>
            )}
            {items.map((it) =>
              it.kind === "tool" ? (
                <ToolCardView key={it.id} card={it} />
              ) : (
                <div key={it.id} className={`msg-block ${it.kind}`} data-seq={it.seq}>
                  {editing?.id === it.id && it.kind === "user" ? (
                    <div className="msg-editor">
                      <textarea
                        className="msg-edit-text"
                        autoFocus
                        rows={3}
                        value={editing.text}
                        onChange={(e) => setEditing({ id: it.id, text: e.target.value })}
                        onKeyDown={(e) => {
                          if (e.key === "Escape") setEditing(null);
                        }}
                      />
                      <div className="hint">{t("msgEditHint")}</div>
                      <div className="row">
                        <button
                          className="primary msg-edit-send"
                          disabled={running || editing.text.trim() === ""}
                          onClick={() => void editSend(it.forkBefore)}
                        >
                          {t("msgEditSend")}
                        </button>
                        <button className="msg-edit-cancel" onClick={() => setEditing(null)}>
                          {t("msgEditCancel")}
                        </button>
                      </div>
                    </div>
                  ) : it.kind === "system" && it.approval ? (
                    <ApprovalNoticeLine notice={it.approval} interrupted={it.interrupted} />
                  ) : it.kind === "system" ? (
                    <TaskNoticeLine notice={it.notice} interrupted={it.interrupted} />
                  ) : (
                    <div className={`msg ${it.kind === "answer" ? "assistant final" : it.kind}${it.interrupted ? " interrupted" : ""}`}>
                      {it.kind === "answer" ? <Markdown text={it.text} render={renderMd} grounding={it.grounding} /> : it.text}
                      {it.kind === "answer" && <GroundingLine grounding={it.grounding} />}
                      {it.kind === "user" && it.skill && (
                        <details className="skill-mark" data-skill={it.skill.name}>
                          <summary>⚡ {t("skillExpandedBy", { name: it.skill.name })}</summary>
                          <pre className="skill-expansion">{it.skill.expansion}</pre>
                        </details>
                      )}
                    </div>
                  )}
                  {editing?.id !== it.id && (
                    <MessageActions actions={actionsFor(it, storedRegenerate)} busy={running} t={t} onAction={(a) => onMessageAction(it, a)} />
                  )}
                </div>
              ),
            )}
            {history?.last_turn_interrupted && <div className="hint turn-end" id="chat-interrupted">⚠ {t("chatInterrupted")}</div>}
            {live.map((l) => (
              <TurnBlock key={l.key} turn={l} onRegenerate={liveRegenerate && l === lastLive ? () => void regenerate() : undefined} />
            ))}
            {error && (
              <div className="error" id="chat-error">
                {chatErrorText(error, t)}
                {error.kind === "setup" && (
                  <button onClick={onOpenSettings}>{t("homeGoSettings")}</button>
                )}
              </div>
            )}
          </div>
          <div className="composer">
            {paletteOpen && skills && <SlashPalette skills={matches} active={paletteIndex} onPick={pick} />}
            {composerError && (
              <div className="error composer-error" id="composer-error" role="alert">
                {composerError}
              </div>
            )}
            <textarea
              id="composer"
              ref={composer}
              value={input}
              placeholder={t("chatPlaceholder")}
              rows={3}
              role="combobox"
              aria-expanded={paletteOpen}
              aria-controls={PALETTE_ID}
              aria-autocomplete="list"
              aria-activedescendant={paletteOpen && matches[paletteIndex] ? optionId(matches[paletteIndex].name) : undefined}
              onChange={(e) => {
                setInput(e.target.value);
                setComposerError(null);
                // Esc closed the palette for what was there; typing on opens it again.
                setPaletteClosed(false);
              }}
              onKeyDown={(e) => {
                if (paletteOpen && !e.nativeEvent.isComposing) {
                  if (e.key === "ArrowDown" || e.key === "ArrowUp") {
                    e.preventDefault();
                    const n = matches.length;
                    if (n > 0) setPaletteIndex((i) => (i + (e.key === "ArrowDown" ? 1 : n - 1)) % n);
                    return;
                  }
                  if ((e.key === "Enter" || e.key === "Tab") && !e.shiftKey && matches[paletteIndex]) {
                    e.preventDefault();
                    pick(matches[paletteIndex]);
                    return;
                  }
                  if (e.key === "Escape") {
                    // Closes the palette only (not the running turn's Esc).
                    e.preventDefault();
                    e.stopPropagation();
                    e.nativeEvent.stopImmediatePropagation();
                    setPaletteClosed(true);
                    return;
                  }
                }
                if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
                  e.preventDefault();
                  void send();
                }
              }}
            />
            {running ? (
              <button id="chat-stop" className="danger" onClick={stop} title="Esc">
                {t("chatStop")}
              </button>
            ) : (
              <button id="chat-send" className="primary" onClick={() => void send()} disabled={input.trim() === ""}>
                {t("chatSend")}
              </button>
            )}
          </div>
          <StatusBar
            turn={lastTurn}
            conversation={convUsage}
            turnCost={lastCost}
            conversationCost={convCost}
            allowed={currentId ? allowed : []}
            onRevoke={(tool) => void revoke(tool)}
          />
        </section>
      </div>
      {pending && <ApprovalDialog key={pending.id} request={pending} onDecide={(d) => void decide(d)} />}
    </>
  );
}
