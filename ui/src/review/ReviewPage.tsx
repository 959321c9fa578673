// The review page: the tracked screen signals with their figures and the
// hit rates per trigger and 水温; every row opens the stock at its signal day, every return
// at the bar it was sold on; a hit-rate cell filters the list to the signals it counts.
import { useContext, useEffect, useState } from "react";
import { commands, type TrackedScreen } from "../bindings";
import { LanguageContext } from "../i18n";
import HitRates from "../tasks/HitRates";
import { isoDate } from "../pages/stockModel";
import { countedRows, countedSummary, reviewText, signalRows, type SignalFilter } from "./reviewModel";

const PAGE = 200;

export default function ReviewPage({ onOpenStock }: { onOpenStock: (code: string, at: number | null) => void }) {
  const lang = useContext(LanguageContext);
  const t = reviewText(lang);
  const [screens, setScreens] = useState<TrackedScreen[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [limit, setLimit] = useState(PAGE);
  const [pick, setPick] = useState<SignalFilter | null>(null);
  useEffect(() => {
    let live = true;
    void commands.trackScreens().then((r) => {
      if (!live) return;
      if (r.status === "ok") setScreens(r.data);
      else setError(r.error.message);
    });
    return () => {
      live = false;
    };
  }, []);
  const rows = screens ? (pick ? countedRows(screens, pick, lang) : signalRows(screens, lang)) : [];
  const horizons = screens?.find((s) => s.candidates.length > 0)?.candidates[0].outcomes.map((o) => o.horizon) ?? [];
  return (
    <section className="page" id="page-review">
      <h1>{t("title")}</h1>
      <p className="lead">{t("lead")}</p>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <HitRates onPick={(f) => setPick(f)} picked={pick} />
      {pick && screens && (
        <p className="result-meta" id="review-filter">
          {countedSummary(screens, pick, rows, lang)}{" "}
          <button id="review-show-all" className="link" onClick={() => setPick(null)}>
            {t("showAll")}
          </button>
        </p>
      )}
      {screens == null && !error && <p>{t("loading")}</p>}
      {screens != null && rows.length === 0 && !pick && <p id="review-empty">{t("empty")}</p>}
      {rows.length > 0 && (
        <>
          {!pick && <p className="result-meta">{t("signals", { n: rows.length })}</p>}
          <table className="screen-table" id="review-signals">
            <thead>
              <tr>
                <th>{t("day")}</th>
                <th>{t("stock")}</th>
                <th>{t("triggers")}</th>
                <th>{t("regime")}</th>
                {horizons.map((h) => (
                  <th key={h}>{lang === "en" ? `${h}d` : `${h}日`}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.slice(0, limit).map((r) => (
                <tr key={r.key} className="review-row" data-code={r.code} data-day={r.day} onClick={() => onOpenStock(r.code, r.day)} style={{ cursor: "pointer" }}>
                  <td>{isoDate(r.day)}</td>
                  <td>
                    <button className="review-open stock-link">
                      {r.code} {r.name}
                    </button>
                  </td>
                  <td>{r.triggers}</td>
                  <td>{r.regime}</td>
                  {r.cells.map((c, i) => (
                    <td key={i} className={`review-cell ${c.status}`} data-status={c.status}>
                      {c.at != null ? (
                        <button
                          className="stock-link review-figure"
                          data-at={c.at}
                          onClick={(e) => {
                            e.stopPropagation();
                            onOpenStock(r.code, c.at);
                          }}
                        >
                          {c.text}
                        </button>
                      ) : (
                        <span className="muted">{c.text}</span>
                      )}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
          {rows.length > limit && (
            <button id="review-more" onClick={() => setLimit((n) => n + PAGE)}>
              {t("more", { n: rows.length - limit })}
            </button>
          )}
        </>
      )}
    </section>
  );
}
