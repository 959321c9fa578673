// A stock's names under its page's header: each name from the day it took effect (marked
// "first seen" when that day is only when a stock-list sync first saw it), and the
// listing; said plainly when nothing is recorded, since past screens then read today's name.
import { useContext, useEffect, useState } from "react";
import { commands, type CodeHistory } from "../bindings";
import { LanguageContext } from "../i18n";
import { isoDate } from "./stockModel";
import { listingText, nameSpans, useHistoryText } from "./stockHistory";

export default function NameHistory({ code }: { code: string }) {
  const h = useHistoryText();
  const lang = useContext(LanguageContext);
  const [loaded, setLoaded] = useState<{ code: string; history: CodeHistory } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    setError(null);
    void (async () => {
      try {
        const r = await commands.nameHistory(code);
        if (!live) return;
        if (r.status === "ok") setLoaded({ code, history: r.data });
        else setError(r.error.message);
      } catch (e) {
        if (live) setError(e instanceof Error ? e.message : String(e));
      }
    })();
    return () => {
      live = false;
    };
  }, [code]);

  // Nothing of the previous stock while the next one loads.
  const history = loaded?.code === code ? loaded.history : null;
  if (error) {
    return (
      <p className="muted" id="name-history-error">
        {h("namesOfStock")}: {error}
      </p>
    );
  }
  if (!history) return null;
  const spans = nameSpans(history);
  const listing = listingText(history, lang);
  return (
    <div className="name-history" id="name-history" data-code={history.code}>
      {spans.length === 0 ? (
        <p className="muted" id="name-history-none">
          {h("noNames")}
        </p>
      ) : (
        <>
          <span className="muted">{h("namesOfStock")}: </span>
          <ol id="name-history-list" className="inline-list">
            {spans.map((s) => (
              <li key={`${s.from}-${s.name}`} className="name-span" data-from={s.from} data-first-seen={s.first_seen} data-source={s.source}>
                {isoDate(s.from)} → {s.name}
                {s.first_seen && <em className="muted"> ({h("firstSeen")})</em>}
              </li>
            ))}
          </ol>
        </>
      )}
      {listing && (
        <span className="muted" id="name-history-listing" data-status={history.listing?.status}>
          {listing}
        </span>
      )}
      {spans.some((s) => s.first_seen) && (
        <p className="muted hint" id="name-history-first-seen">
          {h("firstSeenNote")}
        </p>
      )}
    </div>
  );
}
