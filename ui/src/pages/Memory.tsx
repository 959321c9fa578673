// The Memory page: the long-term memories recall draws from, by type, searchable, and
// editable by hand (add, edit, delete).
import { useCallback, useEffect, useRef, useState } from "react";
import { commands, type CommandError, type MemoryItem } from "../bindings";
import { chatErrorText } from "../format";
import { useT, type MessageKey } from "../i18n";
import { MEMORY_TYPES, memoryTypeLabel, type MemoryType } from "../memoryTypes";

export const SEARCH_DEBOUNCE_MS = 250;

type Result<T> = { status: "ok"; data: T } | { status: "error"; error: CommandError };

/** Runs a command; an IPC failure (thrown, not a CommandError) becomes an error result too,
 * so every failure reaches the user. */
async function call<T>(run: () => Promise<Result<T>>): Promise<Result<T>> {
  try {
    return await run();
  } catch (e) {
    return { status: "error", error: { kind: "internal", message: e instanceof Error ? e.message : String(e), code: null } };
  }
}

/** The local calendar date (YYYY-MM-DD) of an RFC 3339 time; the text itself if unreadable. */
export function localDate(rfc3339: string): string {
  const d = new Date(rfc3339);
  if (Number.isNaN(d.getTime())) return rfc3339;
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** Where a memory came from, in words: `conversation:{id}`, `compaction_flush`, `cli`, or
 * empty for one added by hand. Unknown sources are shown as they are. */
export function sourceText(source: string, t: (k: MessageKey) => string): string {
  if (source.trim() === "") return t("memorySourceManual");
  if (source.startsWith("conversation:")) return t("memorySourceConversation");
  if (source === "compaction_flush") return t("memorySourceCompaction");
  if (source === "cli") return t("memorySourceCli");
  return source;
}

interface Editing {
  id: number;
  text: string;
  error: string | null;
  saving: boolean;
}

function MemoryRow({
  m,
  editing,
  confirming,
  error,
  onEdit,
  onEditText,
  onSave,
  onCancelEdit,
  onAskDelete,
  onDelete,
  onCancelDelete,
}: {
  m: MemoryItem;
  editing: Editing | null;
  confirming: boolean;
  error: string | null;
  onEdit: () => void;
  onEditText: (text: string) => void;
  onSave: () => void;
  onCancelEdit: () => void;
  onAskDelete: () => void;
  onDelete: () => void;
  onCancelDelete: () => void;
}) {
  const t = useT();
  return (
    <li className="memory-item" data-id={m.id} data-type={m.memory_type}>
      <div className="memory-meta">
        <span className={`badge memory-type type-${m.memory_type}`}>{memoryTypeLabel(m.memory_type, t)}</span>
        {m.codes.map((c) => (
          <code key={c} className="memory-code">
            {c}
          </code>
        ))}
        <span className="memory-date" title={m.created_at}>
          {localDate(m.created_at)}
        </span>
        <span className="memory-source" title={m.source}>
          {sourceText(m.source, t)}
        </span>
      </div>
      {editing ? (
        <div className="memory-edit-form">
          <textarea
            className="memory-editor"
            value={editing.text}
            rows={Math.min(8, Math.max(2, editing.text.split("\n").length + 1))}
            autoFocus
            onChange={(e) => onEditText(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
                e.preventDefault();
                onSave();
              } else if (e.key === "Escape") {
                e.preventDefault();
                onCancelEdit();
              }
            }}
          />
          {editing.error && (
            <div className="error memory-edit-error" role="alert">
              {editing.error}
            </div>
          )}
          <div className="row">
            <button type="button" className="primary memory-save" disabled={editing.saving} onClick={onSave}>
              {t("save")}
            </button>
            <button type="button" className="memory-cancel" onClick={onCancelEdit}>
              {t("cancel")}
            </button>
          </div>
        </div>
      ) : (
        <div className="memory-content">{m.content}</div>
      )}
      {confirming ? (
        <div className="row memory-confirm">
          <span>{t("memoryDeleteAsk")}</span>
          <button type="button" className="danger memory-delete-confirm" onClick={onDelete}>
            {t("memoryDeleteConfirm")}
          </button>
          <button type="button" className="memory-delete-cancel" onClick={onCancelDelete}>
            {t("cancel")}
          </button>
        </div>
      ) : (
        !editing && (
          <div className="row memory-actions">
            <button type="button" className="memory-edit" onClick={onEdit}>
              {t("memoryEdit")}
            </button>
            <button type="button" className="danger memory-delete" onClick={onAskDelete}>
              {t("memoryDelete")}
            </button>
          </div>
        )
      )}
      {error && (
        <div className="error memory-item-error" role="alert">
          {error}
        </div>
      )}
    </li>
  );
}

export default function MemoryPage() {
  const t = useT();
  const [filter, setFilter] = useState<MemoryType | null>(null);
  const [query, setQuery] = useState("");
  const [search, setSearch] = useState("");
  const [items, setItems] = useState<MemoryItem[] | null>(null);
  const [counts, setCounts] = useState<Record<string, number> | null>(null);
  const [listError, setListError] = useState<CommandError | null>(null);
  const [countsError, setCountsError] = useState<CommandError | null>(null);
  const [editing, setEditing] = useState<Editing | null>(null);
  const [confirming, setConfirming] = useState<number | null>(null);
  const [itemError, setItemError] = useState<{ id: number; message: string } | null>(null);
  const [addType, setAddType] = useState<MemoryType>("preference");
  const [addText, setAddText] = useState("");
  const [addError, setAddError] = useState<string | null>(null);
  const [added, setAdded] = useState(false);
  const [adding, setAdding] = useState(false);
  const listSeq = useRef(0);

  // Typing settles for a moment before the search runs.
  useEffect(() => {
    const h = setTimeout(() => setSearch(query.trim()), SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(h);
  }, [query]);

  const loadList = useCallback(async () => {
    const seq = ++listSeq.current;
    const r = await call(() => commands.listMemories(filter, search === "" ? null : search));
    if (seq !== listSeq.current) return; // a newer filter or search is on its way
    if (r.status === "ok") {
      setItems(r.data);
      setListError(null);
    } else {
      setItems([]);
      setListError(r.error);
    }
  }, [filter, search]);

  const loadCounts = useCallback(async () => {
    const r = await call(() => commands.memoryCounts());
    if (r.status === "ok") {
      setCounts(Object.fromEntries(r.data.map((c) => [c.memory_type, c.count])));
      setCountsError(null);
    } else {
      setCountsError(r.error);
    }
  }, []);

  useEffect(() => {
    void loadList();
  }, [loadList]);
  useEffect(() => {
    void loadCounts();
  }, [loadCounts]);

  const pageError = listError ?? countsError;
  const total = counts ? Object.values(counts).reduce((a, b) => a + b, 0) : null;

  const save = async () => {
    if (!editing || editing.saving) return;
    const text = editing.text.trim();
    if (text === "") {
      setEditing({ ...editing, error: t("memoryEmptyContent") });
      return;
    }
    setEditing({ ...editing, saving: true, error: null });
    const r = await call(() => commands.updateMemory(editing.id, text));
    if (r.status === "ok") {
      setItems((prev) => prev?.map((m) => (m.id === r.data.id ? r.data : m)) ?? prev);
      setEditing(null);
    } else {
      setEditing((cur) => (cur && cur.id === editing.id ? { ...cur, saving: false, error: chatErrorText(r.error, t) } : cur));
    }
  };

  const remove = async (id: number) => {
    setItemError(null);
    const r = await call(() => commands.deleteMemory(id));
    setConfirming(null);
    if (r.status === "ok") {
      setItems((prev) => prev?.filter((m) => m.id !== id) ?? prev);
      void loadCounts();
    } else {
      setItemError({ id, message: chatErrorText(r.error, t) });
    }
  };

  const add = async () => {
    setAdded(false);
    const text = addText.trim();
    if (text === "") {
      setAddError(t("memoryEmptyContent"));
      return;
    }
    setAdding(true);
    setAddError(null);
    const r = await call(() => commands.addMemory(addType, text));
    setAdding(false);
    if (r.status === "ok") {
      setAddText("");
      setAdded(true);
      void loadList();
      void loadCounts();
    } else {
      setAddError(chatErrorText(r.error, t));
    }
  };

  return (
    <section className="page" id="memory-page">
      <h1>{t("navMemory")}</h1>
      <p className="lead">{t("memoryIntro")}</p>

      <form
        className="card memory-add"
        onSubmit={(e) => {
          e.preventDefault();
          void add();
        }}
      >
        <h2>{t("memoryAddTitle")}</h2>
        <div className="memory-add-row">
          <select id="memory-add-type" aria-label={t("memoryType")} value={addType} onChange={(e) => setAddType(e.target.value as MemoryType)}>
            {MEMORY_TYPES.map((type) => (
              <option key={type} value={type}>
                {memoryTypeLabel(type, t)}
              </option>
            ))}
          </select>
          <textarea
            id="memory-add-text"
            rows={2}
            value={addText}
            placeholder={t("memoryAddPlaceholder")}
            onChange={(e) => {
              setAddText(e.target.value);
              setAdded(false);
            }}
          />
          <button id="memory-add-submit" type="submit" className="primary" disabled={adding}>
            {t("memoryAdd")}
          </button>
        </div>
        {addError && (
          <div className="error" id="memory-add-error" role="alert">
            {addError}
          </div>
        )}
        {added && (
          <div className="ok" id="memory-add-status" role="status">
            {t("memoryAdded")}
          </div>
        )}
      </form>

      <div className="memory-toolbar">
        <div className="memory-tabs" role="tablist">
          {[null, ...MEMORY_TYPES].map((type) => {
            const key = type ?? "all";
            const count = type === null ? total : (counts?.[type] ?? null);
            return (
              <button
                key={key}
                type="button"
                role="tab"
                aria-selected={filter === type}
                className={`memory-tab${filter === type ? " active" : ""}`}
                data-type={key}
                onClick={() => setFilter(type)}
              >
                {type === null ? t("memoryAll") : memoryTypeLabel(type, t)}
                {count !== null && (
                  <span className="memory-count" data-type={key}>
                    {count}
                  </span>
                )}
              </button>
            );
          })}
        </div>
        <input id="memory-search" type="search" placeholder={t("memorySearch")} value={query} onChange={(e) => setQuery(e.target.value)} />
      </div>

      {pageError && (
        <div className="error" id="memory-error" role="alert">
          {chatErrorText(pageError, t)}
        </div>
      )}

      {items === null ? (
        <p className="hint" aria-busy="true">
          {t("memoryLoading")}
        </p>
      ) : items.length === 0 ? (
        listError ? null : search !== "" ? (
          <p className="hint" id="memory-no-match">
            {t("memoryNoMatch", { q: search })}
          </p>
        ) : (
          <div className="card notice" id="memory-empty">
            <p>{t("memoryEmpty")}</p>
          </div>
        )
      ) : (
        <ul className="memory-list" id="memory-list">
          {items.map((m) => (
            <MemoryRow
              key={m.id}
              m={m}
              editing={editing?.id === m.id ? editing : null}
              confirming={confirming === m.id}
              error={itemError?.id === m.id ? itemError.message : null}
              onEdit={() => {
                setConfirming(null);
                setItemError(null);
                setEditing({ id: m.id, text: m.content, error: null, saving: false });
              }}
              onEditText={(text) => setEditing((cur) => (cur && cur.id === m.id ? { ...cur, text, error: null } : cur))}
              onSave={() => void save()}
              onCancelEdit={() => setEditing(null)}
              onAskDelete={() => {
                setEditing(null);
                setItemError(null);
                setConfirming(m.id);
              }}
              onDelete={() => void remove(m.id)}
              onCancelDelete={() => setConfirming(null)}
            />
          ))}
        </ul>
      )}
    </section>
  );
}
