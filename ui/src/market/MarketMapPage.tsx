// The market map page: the industries as a treemap (area = traded value, colour = 5-day
// return relative to the market), a click listing an industry's members (each opening its
// stock page), the rotation chart (RS-Ratio against RS-Momentum, the last 20 trading days as
// trails) and the limit figures of the last trading days. Without industries it says how to
// get them and imports a file or a TDX folder. A 行业 / 概念 switch puts the concept blocks'
// 5-day strength table in the industries' place. Every figure is the desk's.
import { useCallback, useContext, useEffect, useState } from "react";
import { commands, type IndustriesImportReport, type IndustryMembers, type MarketMap, type MarketMapSeries, type RotationTrail, type SectorRow } from "../bindings";
import { LanguageContext } from "../i18n";
import { MISSING, formatPct } from "../chat/diagnosis";
import { badLineText, isoDay, noteText, sealRateText } from "./mapModel";
import { FULL_COLOUR_PP, rotationSpan, rotationXY, squarify, strengthColour } from "./treemap";
import { mapText } from "./text";
import ConceptTable from "./ConceptTable";
import { conceptText } from "./concepts";
import "./market.css";

type T = ReturnType<typeof mapText>;

const SERIES_DAYS = 20;
// The treemap's own coordinates; the cells are placed in percent of them.
const MAP_W = 1000;
const MAP_H = 420;
const CHART = 420;
// One colour per trail, told apart on either theme.
const TRAIL_COLOURS = ["#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#65a30d", "#9333ea", "#ea580c"];

function Treemap({ rows, selected, onPick }: { rows: SectorRow[]; selected: string | null; onPick: (industry: string) => void }) {
  const cells = squarify(rows.map((r) => ({ value: r.amount ?? 0, data: r })), { x: 0, y: 0, w: MAP_W, h: MAP_H });
  return (
    <div className="map-treemap" id="map-treemap" style={{ aspectRatio: `${MAP_W} / ${MAP_H}` }}>
      {cells.map((c) => {
        const r = c.data;
        return (
          <button
            key={r.industry}
            className={`map-cell${selected === r.industry ? " selected" : ""}`}
            data-industry={r.industry}
            data-relative={r.relative_short_pct ?? ""}
            title={`${r.industry} ${formatPct(r.relative_short_pct)}`}
            style={{
              left: `${(c.x / MAP_W) * 100}%`,
              top: `${(c.y / MAP_H) * 100}%`,
              width: `${(c.w / MAP_W) * 100}%`,
              height: `${(c.h / MAP_H) * 100}%`,
              background: strengthColour(r.relative_short_pct),
            }}
            onClick={() => onPick(r.industry)}
          >
            <span className="map-cell-name">{r.industry}</span>
            <span className="map-cell-figure">{formatPct(r.relative_short_pct)}</span>
          </button>
        );
      })}
    </div>
  );
}

function Members({ m, t, onOpenStock, onClose }: { m: IndustryMembers; t: T; onOpenStock: (code: string) => void; onClose: () => void }) {
  return (
    <div id="map-members" data-industry={m.industry}>
      <h3>
        {t("members", { name: m.industry, d: m.trade_date })}{" "}
        <button className="link" id="map-members-close" onClick={onClose}>
          {t("close")}
        </button>
      </h3>
      <table className="portfolio-table">
        <thead>
          <tr>
            <th>{t("memberCode")}</th>
            <th>{t("memberName")}</th>
            <th className="num">{t("memberChange")}</th>
            <th className="num">{t("member5d")}</th>
            <th>{t("memberLimit")}</th>
          </tr>
        </thead>
        <tbody>
          {m.members.map((x) => (
            <tr key={x.code} className="map-member" data-code={x.code} data-limit-up={x.limit_up}>
              <td>
                <button className="link map-member-open" data-code={x.code} onClick={() => onOpenStock(x.code)}>
                  {x.code}
                </button>
              </td>
              <td>{x.name}</td>
              <td className="num">{formatPct(x.change_pct)}</td>
              <td className="num">{formatPct(x.return_short_pct)}</td>
              <td>{x.limit_up ? (x.boards && x.boards > 1 ? t("boards", { n: x.boards }) : t("limitUp")) : ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const QUADRANTS = [
  ["leading", "end", "start"],
  ["improving", "start", "start"],
  ["lagging", "start", "end"],
  ["weakening", "end", "end"],
] as const;

function Rotation({ trails, t }: { trails: RotationTrail[]; t: T }) {
  // a point without both figures (never sent, but typed as possible) is left out
  const drawn = trails
    .map((tr) => ({ ...tr, points: tr.points.flatMap((p) => (p.rs_ratio === null || p.rs_momentum === null ? [] : [{ date: p.date, rs_ratio: p.rs_ratio, rs_momentum: p.rs_momentum }])) }))
    .filter((tr) => tr.points.length > 0);
  if (drawn.length === 0)
    return (
      <p className="hint" id="map-rotation-empty">
        {t("rotationEmpty")}
      </p>
    );
  const span = rotationSpan(drawn.flatMap((tr) => tr.points));
  const half = CHART / 2;
  const pad = 8;
  return (
    <svg id="map-rotation" className="map-rotation" viewBox={`0 0 ${CHART} ${CHART}`} role="img" aria-label={t("rotation")}>
      <rect x={half} y={0} width={half} height={half} className="q-leading" />
      <rect x={0} y={0} width={half} height={half} className="q-improving" />
      <rect x={0} y={half} width={half} height={half} className="q-lagging" />
      <rect x={half} y={half} width={half} height={half} className="q-weakening" />
      <line x1={half} y1={0} x2={half} y2={CHART} className="axis" />
      <line x1={0} y1={half} x2={CHART} y2={half} className="axis" />
      {QUADRANTS.map(([q, h, v]) => (
        <text
          key={q}
          className="quadrant-label"
          data-quadrant={q}
          x={h === "end" ? CHART - pad : pad}
          y={v === "start" ? pad + 12 : CHART - pad}
          textAnchor={h}
        >
          {t(q)}
        </text>
      ))}
      <text className="axis-label" x={CHART - pad} y={half - 4} textAnchor="end">
        {t("rsRatio")} →
      </text>
      <text className="axis-label" x={half + 4} y={CHART - 24}>
        ↑ {t("rsMomentum")}
      </text>
      {drawn.map((tr, k) => {
        const xy = tr.points.map((p) => rotationXY(p, span, CHART));
        const last = xy[xy.length - 1];
        const lastPoint = tr.points[tr.points.length - 1];
        return (
          <g key={tr.industry} className="map-trail" style={{ color: TRAIL_COLOURS[k % TRAIL_COLOURS.length] }} data-industry={tr.industry} data-rotation={tr.rotation ?? ""} data-points={tr.points.length}>
            <polyline points={xy.map((p) => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(" ")} />
            <circle cx={last.x} cy={last.y} r={4}>
              <title>{`${tr.industry} ${lastPoint.date}: ${lastPoint.rs_ratio.toFixed(2)}, ${lastPoint.rs_momentum.toFixed(2)}`}</title>
            </circle>
            <text x={last.x + 6} y={last.y - 6}>
              {tr.industry}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

function LimitSeries({ s, t }: { s: MarketMapSeries; t: T }) {
  return (
    <table className="portfolio-table" id="map-limit-series">
      <thead>
        <tr>
          <th>{t("moodDate")}</th>
          <th className="num">{t("limitUp")}</th>
          <th className="num">{t("limitDown")}</th>
          <th className="num">{t("failed")}</th>
          <th className="num">{t("highestBoard")}</th>
          <th className="num">{t("premium")}</th>
          <th className="num">{t("sealRate")}</th>
        </tr>
      </thead>
      <tbody>
        {[...s.limits].reverse().map((d) => (
          <tr key={d.date} className="map-limit-day" data-date={isoDay(d.date)}>
            <td>{isoDay(d.date)}</td>
            <td className="num">{d.limit_up}</td>
            <td className="num">{d.limit_down}</td>
            <td className="num">{d.failed}</td>
            <td className="num">{d.highest_board}</td>
            <td className="num">{formatPct(d.premium_pct)}</td>
            <td className="num">{sealRateText(d.seal_rate)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function importNote(r: IndustriesImportReport, t: T): ImportNote {
  if (r.status === "rejected")
    return { ok: false, text: t("importRejected", { n: r.bad_lines }), lines: r.errors.map((e) => badLineText(e, t)) };
  const d = isoDay(r.loaded_on);
  if (r.write === "unchanged") return { ok: true, text: t("importUnchanged", { d }), lines: [] };
  return { ok: true, text: t("imported", { stocks: r.stocks, industries: r.industries, d }), lines: [] };
}

type ImportNote = { ok: boolean; text: string; lines: string[] };

function ImportResult({ note }: { note: ImportNote }) {
  return (
    <div id="map-import-note" data-ok={note.ok} className={note.ok ? "hint" : "error"} role={note.ok ? undefined : "alert"}>
      <p>{note.text}</p>
      {note.lines.length > 0 && (
        <ul>
          {note.lines.map((l) => (
            <li key={l} className="map-import-bad">
              {l}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

// The import's result is the page's: after a good import this form gives way to the map.
function ImportIndustries({ t, setNote, onImported }: { t: T; setNote: (n: ImportNote) => void; onImported: () => void }) {
  const [path, setPath] = useState("");
  const submit = async () => {
    if (path.trim() === "") return setNote({ ok: false, text: t("importNeedPath"), lines: [] });
    try {
      const r = await commands.industriesImport(path.trim());
      if (r.status === "ok") {
        const n = importNote(r.data, t);
        setNote(n);
        if (n.ok) onImported();
      } else setNote({ ok: false, text: r.error.message, lines: [] });
    } catch (e) {
      setNote({ ok: false, text: e instanceof Error ? e.message : String(e), lines: [] });
    }
  };
  return (
    <div id="map-no-industries">
      <p className="notice" id="map-no-industries-text">
        {t("noIndustries")}
      </p>
      <form
        className="row"
        id="map-import-form"
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <label className="pf-field" style={{ flex: 1 }}>
          <span>{t("importPath")}</span>
          <input id="map-import-path" value={path} placeholder="/home/me/industries.csv" spellCheck={false} onChange={(e) => setPath(e.target.value)} />
        </label>
        <button id="map-import" type="submit">
          {t("importButton")}
        </button>
      </form>
    </div>
  );
}

export default function MarketMapPage({ onOpenStock }: { onOpenStock: (code: string) => void }) {
  const lang = useContext(LanguageContext);
  const t = mapText(lang);
  const [map, setMap] = useState<MarketMap | null>(null);
  const [series, setSeries] = useState<MarketMapSeries | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [members, setMembers] = useState<IndustryMembers | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [imported, setImported] = useState<ImportNote | null>(null);
  const [view, setView] = useState<"industries" | "concepts">("industries");
  const ct = conceptText(lang);

  const load = useCallback(async () => {
    try {
      const [m, s] = await Promise.all([commands.marketMap(null), commands.marketMapSeries(null, SERIES_DAYS)]);
      if (m.status === "ok") setMap(m.data);
      else setError(m.error.message);
      if (s.status === "ok") setSeries(s.data);
      else setError(s.error.message);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  const pick = async (industry: string) => {
    setSelected(industry);
    try {
      const r = await commands.industryMembers(industry, map?.trade_date ?? null);
      if (r.status === "ok") setMembers(r.data);
      else setError(r.error.message);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };

  const rows = map?.sectors?.rows ?? [];
  return (
    <div className="market-map-page" id="market-map" lang={lang === "en" ? "en" : "zh-CN"}>
      <h1>
        {t("title")} {map && <span className="hint" id="map-date">{t("asOf", { d: map.trade_date })}</span>}
      </h1>
      {error && (
        <p className="error" role="alert" id="map-error">
          {error}
        </p>
      )}
      {map && map.notes.length > 0 && (
        <ul className="hint" id="map-notes">
          {map.notes.map((n) => (
            <li key={n.type} data-note={n.type}>
              {noteText(n, t)}
            </li>
          ))}
        </ul>
      )}
      <div className="period-switch" role="group" aria-label={`${ct("industriesTab")} / ${ct("conceptsTab")}`} id="map-view-switch">
        {(["industries", "concepts"] as const).map((v) => (
          <button key={v} id={`map-view-${v}`} className={v === view ? "active" : ""} aria-pressed={v === view} onClick={() => setView(v)}>
            {ct(v === "industries" ? "industriesTab" : "conceptsTab")}
          </button>
        ))}
      </div>
      {view === "concepts" && (map || error) && <ConceptTable asOf={map?.trade_date ?? null} />}
      {view === "industries" && map && !map.sectors && (
        <ImportIndustries
          t={t}
          setNote={setImported}
          onImported={() => {
            setMembers(null);
            setSelected(null);
            void load();
          }}
        />
      )}
      {view === "industries" && imported && <ImportResult note={imported} />}
      {view === "industries" && rows.length > 0 && (
        <div className="card">
          <h2>{t("treemap")}</h2>
          <Treemap rows={rows} selected={selected} onPick={(i) => void pick(i)} />
          <p className="hint">{t("treemapLegend", { pp: FULL_COLOUR_PP })}</p>
          {members && (
            <Members
              m={members}
              t={t}
              onOpenStock={onOpenStock}
              onClose={() => {
                setMembers(null);
                setSelected(null);
              }}
            />
          )}
        </div>
      )}
      {view === "industries" && series && series.trails.length > 0 && (
        <div className="card">
          <h2>{t("rotation")}</h2>
          <Rotation trails={series.trails} t={t} />
        </div>
      )}
      {series && (
        <div className="card">
          <h2>{t("series", { n: series.limits.length })}</h2>
          <LimitSeries s={series} t={t} />
        </div>
      )}
      {!map && !error && <p className="hint">{MISSING}</p>}
    </div>
  );
}
