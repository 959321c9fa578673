// The map page's 概念 view: each concept block's 5-day return against the market's on the
// map's day, strongest first, with where the blocks came from and whether today's blocks
// stand in for a past day. Every figure is the desk's.
import { useContext, useEffect, useState } from "react";
import { commands, type ConceptStrength } from "../bindings";
import { LanguageContext } from "../i18n";
import { MISSING } from "../chat/diagnosis";
import { isoDay } from "./mapModel";
import { conceptNotes, conceptText, signedPct } from "./concepts";

/** `asOf`: the map's day (`YYYY-MM-DD`), the newest cached when `null`. */
export default function ConceptTable({ asOf }: { asOf: string | null }) {
  const t = conceptText(useContext(LanguageContext));
  const [page, setPage] = useState<ConceptStrength | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    setError(null);
    void (async () => {
      try {
        const r = await commands.conceptStrength(asOf);
        if (!live) return;
        if (r.status === "ok") setPage(r.data);
        else setError(r.error.message);
      } catch (e) {
        if (live) setError(e instanceof Error ? e.message : String(e));
      }
    })();
    return () => {
      live = false;
    };
  }, [asOf]);

  if (error)
    return (
      <p className="error" role="alert" id="concepts-error">
        {error}
      </p>
    );
  if (!page) return <p className="hint">{MISSING}</p>;
  const rows = page.table?.rows ?? [];
  return (
    <div className="card" id="map-concepts" data-load-later={page.load_later}>
      {page.table && <h2>{t("conceptTitle", { d: isoDay(page.table.date) })}</h2>}
      <ul className="hint" id="concept-notes">
        {conceptNotes(page, t).map((n) => (
          <li key={n.id} data-note={n.id}>
            {n.text}
          </li>
        ))}
      </ul>
      {rows.length > 0 && (
        <table className="portfolio-table" id="concept-table">
          <thead>
            <tr>
              <th>{t("concept")}</th>
              <th className="num">{t("members")}</th>
              <th className="num">{t("counted")}</th>
              <th className="num">{t("return5d")}</th>
              <th className="num">{t("relative5d")}</th>
              <th className="num">{t("upToday")}</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.concept} className="concept-row" data-concept={r.concept} data-relative={r.relative_5d_pct}>
                <td>{r.concept}</td>
                <td className="num">{r.members}</td>
                <td className="num">{r.counted}</td>
                <td className="num">{signedPct(r.return_5d_pct)}</td>
                <td className="num">{signedPct(r.relative_5d_pct)}</td>
                <td className="num">{`${r.up_today}/${r.counted}`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
