// The overview's part of the market map: the day's mood line (涨停 / 跌停 / 炸板 / highest
// board / 涨停溢价 / 封板率 with its trading day), the 连板 ladder with each stock opening
// its page, and the limit figures the 水温 line cites. One read of the desk's map serves all.
import { useContext, useEffect, useState } from "react";
import { commands, type MarketMap } from "../bindings";
import { LanguageContext } from "../i18n";
import { ladderGroups, moodFigures } from "./mapModel";
import { mapText } from "./text";

/** The day's map (the newest cached day), read again when `reloadKey` changes; `null` until
 * it arrives or when the cache has no bars (the overview says that already). */
export function useDayMap(reloadKey: number): { map: MarketMap | null; error: string | null } {
  const [map, setMap] = useState<MarketMap | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    void (async () => {
      try {
        const r = await commands.marketMap(null);
        if (!live) return;
        if (r.status === "ok") {
          setMap(r.data);
          setError(null);
        } else setError(r.error.message);
      } catch (e) {
        if (live) setError(e instanceof Error ? e.message : String(e));
      }
    })();
    return () => {
      live = false;
    };
  }, [reloadKey]);
  return { map, error };
}

/** The limit counts the 水温 explanation cites. */
export function RegimeLimits({ map }: { map: MarketMap | null }) {
  const t = mapText(useContext(LanguageContext));
  if (!map) return null;
  const l = map.limits;
  return (
    <span className="hint" id="ov-regime-limits" data-limit-up={l.limit_up} data-limit-down={l.limit_down} data-failed={l.failed}>
      {" — "}
      {t("regimeLimits", { up: l.limit_up, down: l.limit_down, failed: l.failed, d: map.trade_date })}
    </span>
  );
}

export function MoodSection({ map, error, onOpenStock }: { map: MarketMap | null; error: string | null; onOpenStock: (code: string) => void }) {
  const t = mapText(useContext(LanguageContext));
  return (
    <div className="card" id="ov-market-mood">
      <h2>{t("mood")}</h2>
      {error && (
        <p className="notice" id="ov-mood-missing">
          {error}
        </p>
      )}
      {!map && !error && <p className="hint">{t("loading")}</p>}
      {map && (
        <>
          <p id="ov-mood" data-date={map.trade_date}>
            <span className="mood-date">{t("asOf", { d: map.trade_date })}</span>
            {moodFigures(map.limits, t).map(([id, label, value]) => (
              <span key={id} className="mood-figure" id={`ov-mood-${id}`} data-value={value}>
                {" · "}
                {label} <strong>{value}</strong>
              </span>
            ))}
          </p>
          <h3>{t("ladder")}</h3>
          {map.limits.ladder.length === 0 ? (
            <p className="hint" id="ov-ladder-empty">
              {t("ladderEmpty")}
            </p>
          ) : (
            <dl className="facts" id="ov-ladder">
              {ladderGroups(map.limits.ladder).map((g) => (
                <div key={g.boards} className="ov-ladder-row" data-boards={g.boards} style={{ display: "contents" }}>
                  <dt>{t("boards", { n: g.boards })}</dt>
                  <dd>
                    {g.stocks.map((s, i) => (
                      <span key={s.code}>
                        {i > 0 && "、"}
                        <button className="link ov-ladder-stock" data-code={s.code} onClick={() => onOpenStock(s.code)}>
                          {s.code} {s.name}
                        </button>
                        {s.one_price && <span className="hint"> {t("onePrice")}</span>}
                      </span>
                    ))}
                  </dd>
                </div>
              ))}
            </dl>
          )}
        </>
      )}
    </div>
  );
}
