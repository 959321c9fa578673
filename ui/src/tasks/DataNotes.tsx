// What a screen, backtest, sweep or walk-forward says of its own data: which rules read
// today's facts for a past day (ST from today's names, size from today's caps, delisted
// stocks missing) and how many stocks that was, so a past result is never silently built
// on today's labels.
import { useContext } from "react";
import type { Value } from "../bindings";
import { LanguageContext } from "../i18n";
import { taskText } from "./text";

/** The strings of a JSON list (anything else is no notes). */
export function noteLines(v: Value | undefined): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string" && x.length > 0) : [];
}

export default function DataNotes({ notes, id }: { notes: string[]; id: string }) {
  const lang = useContext(LanguageContext);
  if (notes.length === 0) return null;
  return (
    <div className="warning data-notes" id={id} role="note">
      {taskText(lang, "dataNotes")}
      <ul>
        {notes.map((n, i) => (
          <li key={i}>{n}</li>
        ))}
      </ul>
    </div>
  );
}
