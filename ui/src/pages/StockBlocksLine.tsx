// A stock's industry (with the load it was read from) and its concept blocks under its
// page's header, from the latest loads; said plainly when none are on record.
import { useContext, useEffect, useState } from "react";
import { commands, type StockMembership } from "../bindings";
import { LanguageContext } from "../i18n";
import { blocksLines, conceptText } from "../market/concepts";

export default function StockBlocksLine({ code }: { code: string }) {
  const t = conceptText(useContext(LanguageContext));
  const [loaded, setLoaded] = useState<StockMembership | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    setError(null);
    void (async () => {
      try {
        const r = await commands.stockBlocks(code, null);
        if (!live) return;
        if (r.status === "ok") setLoaded(r.data);
        else setError(r.error.message);
      } catch (e) {
        if (live) setError(e instanceof Error ? e.message : String(e));
      }
    })();
    return () => {
      live = false;
    };
  }, [code]);

  if (error)
    return (
      <p className="muted" id="stock-blocks-error">
        {t("conceptsTab")}: {error}
      </p>
    );
  // nothing of the previous stock while the next one loads
  if (!loaded || loaded.code !== code) return null;
  const l = blocksLines(loaded, t);
  return (
    <div className="name-history" id="stock-blocks" data-code={loaded.code}>
      <p className="muted" id="stock-industry">
        {l.industry}
      </p>
      {l.concepts === null ? (
        <p className="muted" id="stock-concepts-none">
          {l.conceptsNote}
        </p>
      ) : (
        <p id="stock-concepts">
          <span className="muted">{t("conceptsLine")}</span>
          {l.concepts}
          {l.conceptsNote && <em className="muted">{l.conceptsNote}</em>}
        </p>
      )}
    </div>
  );
}
