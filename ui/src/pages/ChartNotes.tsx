// The chart notes beside the stock chart: each note in words with who drew it and when
// (in its author's colour), removable; and the user's own "Note…" form, prefilled from
// the bar last clicked on the chart.
import { useState } from "react";
import type { Annotation, Shape } from "../bindings";
import { formAt, formShape, noteColor, noteText, notesText, type NoteForm } from "./chartNotes";

interface Props {
  notes: Annotation[];
  lang: string;
  /** The bar last clicked on the chart (YYYYMMDD) and the price there. */
  picked: { date: number; price: number | null } | null;
  /** Resolves to an error message, or null when drawn. */
  onAdd: (shape: Shape) => Promise<string | null>;
  onRemove: (id: number) => void;
}

export default function ChartNotes({ notes, lang, picked, onAdd, onRemove }: Props) {
  const t = notesText(lang);
  const [form, setForm] = useState<NoteForm | null>(null);
  const [error, setError] = useState<string | null>(null);
  const open = (kind: NoteForm["kind"]) => setForm(formAt(kind, picked?.date ?? null, picked?.price ?? null));
  const submit = async () => {
    if (!form) return;
    let shape: Shape;
    try {
      shape = formShape(form, lang);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
      return;
    }
    const why = await onAdd(shape);
    setError(why);
    if (why == null) setForm(null);
  };
  const field = (key: keyof Omit<NoteForm, "kind">, label: string) => (
    <label key={key}>
      {label}{" "}
      <input id={`note-${key}`} value={form?.[key] ?? ""} onChange={(e) => form && setForm({ ...form, [key]: e.target.value })} size={key === "text" ? 24 : 10} />
    </label>
  );
  return (
    <div className="chart-notes" id="chart-notes-panel">
      <h2>{t("title")}</h2>
      {notes.length === 0 ? (
        <p className="muted" id="no-chart-notes">
          {t("none")}
        </p>
      ) : (
        <ul id="chart-notes">
          {notes.map((n) => (
            <li key={n.id} className="chart-note" data-id={n.id} data-kind={n.shape.kind} data-author={n.author.type} style={{ borderLeft: `4px solid ${noteColor(n)}`, paddingLeft: 6 }}>
              <span className="chart-note-text">{noteText(n, lang)}</span>{" "}
              <button className="chart-note-remove" aria-label={`${t("remove")} ${n.id}`} onClick={() => onRemove(n.id)}>
                {t("remove")}
              </button>
            </li>
          ))}
        </ul>
      )}
      {form == null ? (
        <button id="note-open" onClick={() => open("line")}>
          {t("add")}
        </button>
      ) : (
        <form
          id="note-form"
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
        >
          <label>
            {t("kind")}{" "}
            <select id="note-kind" value={form.kind} onChange={(e) => setForm({ ...formAt(e.target.value as NoteForm["kind"], picked?.date ?? null, picked?.price ?? null) })}>
              {(["box", "line", "text"] as const).map((k) => (
                <option key={k} value={k}>
                  {t(k)}
                </option>
              ))}
            </select>
          </label>
          {form.kind === "box" && [field("from", t("from")), field("to", t("to")), field("low", t("low")), field("high", t("high"))]}
          {form.kind === "line" && [field("price", t("price")), field("from", t("from")), field("to", t("to"))]}
          {form.kind === "text" && [field("date", t("date")), field("text", t("words"))]}
          <button id="note-save" type="submit">
            {t("save")}
          </button>
          <button type="button" onClick={() => (setForm(null), setError(null))}>
            {t("cancel")}
          </button>
          <p className="muted">{t("pickHint")}</p>
        </form>
      )}
      {error && (
        <p className="error" id="note-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
