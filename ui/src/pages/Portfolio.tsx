// The portfolio page: each position with its last price and that price's date, P/L,
// weight, and the engine's health and verdict; add / edit / remove through the same
// validation as the agent's `update_portfolio` (no approval dialog: these are the user's
// own clicks). A refused edit shows the backend's reason beside the form and changes nothing.
import { useCallback, useContext, useEffect, useMemo, useState } from "react";
import { commands, type PortfolioEdit, type PortfolioPage, type PositionRow } from "../bindings";
import { LanguageContext } from "../i18n";
import { MISSING, engineLabel, formatPct, formatPrice } from "../chat/diagnosis";
import { formatCost, formatMoney, formatShares } from "../chat/portfolio";
import { formToEdit, parseNumber, pnlClass, todayIso, workspaceErrorText, type PositionForm } from "./workspaceModel";
import { useWorkspaceText } from "./workspaceText";
import Journal from "../journal/Journal";
import PositionLevels from "./PositionLevels";
import { AccountRiskSection } from "../risk/RiskViews";
import { liveHeading, useLiveQuotes } from "./liveQuote";
import LiveCell from "./LiveCell";

// One line per field group; the shared stylesheet has no form layout of its own.
const FIELD_STYLE = { display: "inline-flex", alignItems: "center", gap: 6, margin: "0 12px 8px 0" } as const;

const emptyForm = (): PositionForm => ({ code: "", shares: "", cost: "", buyDate: todayIso(new Date()) });

function PriceCell({ r }: { r: PositionRow }) {
  const t = useWorkspaceText();
  if (r.last === null) return <span className="warn">{t("pfNoPrice")}</span>;
  return <>{formatPrice(r.last)}</>;
}

export default function PortfolioPage({ onOpen }: { onOpen: (code: string) => void }) {
  const t = useWorkspaceText();
  const lang = useContext(LanguageContext);
  const [page, setPage] = useState<PortfolioPage | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [formError, setFormError] = useState<string | null>(null);
  const [form, setForm] = useState<PositionForm>(emptyForm);
  const [editing, setEditing] = useState<string | null>(null);
  const [cash, setCash] = useState("");
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      const r = await commands.portfolioPage();
      if (r.status === "ok") setPage(r.data);
      else setLoadError(workspaceErrorText(r.error, t, lang));
    } catch (e) {
      setLoadError(e instanceof Error ? e.message : String(e));
    }
    // Loaded once on open; the wording of an error follows the language at that time.
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  const send = async (edit: PortfolioEdit): Promise<boolean> => {
    setBusy(true);
    setFormError(null);
    try {
      const r = await commands.portfolioEdit(edit);
      if (r.status === "ok") {
        setPage(r.data);
        return true;
      }
      setFormError(workspaceErrorText(r.error, t, lang));
    } catch (e) {
      setFormError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
    return false;
  };

  const submit = async () => {
    const edit = formToEdit(form, editing, t);
    if (typeof edit === "string") {
      setFormError(edit);
      return;
    }
    if (await send(edit)) {
      setForm(emptyForm());
      setEditing(null);
    }
  };

  const startEdit = (r: PositionRow) => {
    setEditing(r.code);
    setFormError(null);
    setForm({ code: r.code, shares: String(r.shares), cost: r.cost === null ? "" : String(r.cost), buyDate: r.buy_dt });
  };

  const setCashAmount = async () => {
    const n = parseNumber(cash);
    if (n === null) {
      setFormError(t("pfNotNumber", { field: t("pfCash") }));
      return;
    }
    if (await send({ type: "set_cash", free_cash: n })) setCash("");
  };

  const field = (id: string, label: string, key: keyof PositionForm, disabled = false) => (
    <label className="pf-field" style={FIELD_STYLE}>
      <span>{label}</span>
      <input id={id} value={form[key]} disabled={disabled} onChange={(e) => setForm({ ...form, [key]: e.target.value })} />
    </label>
  );

  const rows = useMemo(() => page?.positions ?? [], [page]);
  const codes = useMemo(() => rows.map((r) => r.code), [rows]);
  // During the session each holding's price as of its quote, beside the cached close.
  const live = useLiveQuotes(codes, true);
  return (
    <section className="page" id="page-portfolio">
      <h1>{t("pfTitle")}</h1>
      {loadError && (
        <p className="error" role="alert" id="pf-load-error">
          {loadError}
        </p>
      )}
      {page && rows.length === 0 && <p id="pf-empty">{t("pfEmpty")}</p>}
      {rows.length > 0 && (
        <div className="portfolio-scroll">
          <table className="portfolio-table" id="pf-table">
            <thead>
              <tr>
                <th>{t("pfCode")}</th>
                <th>{t("pfName")}</th>
                <th className="num">{t("pfShares")}</th>
                <th className="num">{t("pfCost")}</th>
                <th className="num">{t("pfLast")}</th>
                <th>{t("pfLastDate")}</th>
                {live.size > 0 && <th id="pf-live-head">{liveHeading(lang === "en" ? "en" : "zh")}</th>}
                <th className="num">{t("pfPnl")}</th>
                <th className="num">{t("pfPnlPct")}</th>
                <th className="num">{t("pfWeight")}</th>
                <th>{t("pfHealth")}</th>
                <th>{t("pfVerdict")}</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.code} className="pf-row" data-code={r.code} data-status={r.data_status}>
                  <td>
                    <button className="link code pf-open" onClick={() => onOpen(r.code)}>
                      {r.code}
                    </button>
                  </td>
                  <td>{r.name || MISSING}</td>
                  <td className="num pf-shares">{formatShares(r.shares)}</td>
                  <td className="num pf-cost">{formatCost(r.cost)}</td>
                  <td className="num pf-last" data-value={r.last ?? ""}>
                    <PriceCell r={r} />
                  </td>
                  <td className={`pf-date${r.data_status === "ok" ? "" : " warn"}`} title={r.error ?? undefined}>
                    {r.last_date ?? MISSING}
                    {r.last_date && r.data_status !== "ok" ? ` (${t("pfStale")})` : ""}
                  </td>
                  {live.size > 0 && <LiveCell quote={live.get(r.code)} className="num pf-live" />}
                  <td className={["num", "pf-pnl", pnlClass(r.pnl_amount)].filter(Boolean).join(" ")} data-value={r.pnl_amount ?? ""}>
                    {formatMoney(r.pnl_amount)}
                  </td>
                  <td className={["num", "pf-pnl-pct", pnlClass(r.pnl_pct)].filter(Boolean).join(" ")} data-value={r.pnl_pct ?? ""}>
                    {formatPct(r.pnl_pct)}
                  </td>
                  <td className="num pf-weight">{r.weight_pct === null ? MISSING : `${r.weight_pct.toFixed(2)}%`}</td>
                  <td className="pf-health" title={r.health_reasons.join("\n") || undefined}>
                    {engineLabel(r.health, lang) ?? (r.error ? engineLabel(r.error, lang) : MISSING)}
                  </td>
                  <td className="pf-verdict">{engineLabel(r.verdict, lang) ?? MISSING}</td>
                  <td>
                    <button className="pf-edit" onClick={() => startEdit(r)}>
                      {t("pfEdit")}
                    </button>{" "}
                    <button className="pf-remove" disabled={busy} onClick={() => void send({ type: "remove", code: r.code })}>
                      {t("pfRemove")}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {page && (
        <dl className="facts portfolio-facts" id="pf-facts">
          <dt>{t("pfCash")}</dt>
          <dd id="pf-cash" data-source={page.cash_from_ledger ? "ledger" : "stated"}>
            {formatMoney(page.free_cash)}
            {page.cash_from_ledger && (
              <span className="hint" id="pf-cash-from-ledger">
                {" "}
                {t("pfCashFromLedger")}
              </span>
            )}
          </dd>
          {page.total_market_value !== null && (
            <>
              <dt>{t("pfMarketValue")}</dt>
              <dd id="pf-mv">{formatMoney(page.total_market_value)}</dd>
              <dt>{t("pfTotalAssets")}</dt>
              <dd id="pf-total">{formatMoney(page.total_assets)}</dd>
            </>
          )}
        </dl>
      )}
      {page?.as_of && (
        <p className="hint" id="pf-as-of">
          {t("pfAsOf", { d: page.as_of })}
        </p>
      )}
      {page && page.without_quotes > 0 && (
        <p className="hint warn" id="pf-without-quotes">
          {t("pfWithoutQuotes", { n: page.without_quotes })}
        </p>
      )}

      <form
        className="card pf-form"
        id="pf-form"
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <h2>{editing ? t("pfEditing", { code: editing }) : t("pfAdd")}</h2>
        {field("pf-code", t("pfCode"), "code", editing !== null)}
        {field("pf-shares-input", t("pfShares"), "shares")}
        {field("pf-cost-input", t("pfCost"), "cost")}
        {editing === null && field("pf-buy-date", t("pfBuyDate"), "buyDate")}
        <button id="pf-submit" className="primary" type="submit" disabled={busy}>
          {editing ? t("pfSave") : t("pfAdd")}
        </button>
        {editing && (
          <button
            type="button"
            id="pf-cancel"
            onClick={() => {
              setEditing(null);
              setForm(emptyForm());
              setFormError(null);
            }}
          >
            {t("pfCancel")}
          </button>
        )}
        {formError && (
          <p className="error" role="alert" id="pf-error">
            {formError}
          </p>
        )}
      </form>
      {editing && page?.positions.some((p) => p.code === editing) && <PositionLevels row={page.positions.find((p) => p.code === editing) as PositionRow} onSaved={setPage} />}
      {!page?.cash_from_ledger && (
        <form
          className="pf-cash-form"
          onSubmit={(e) => {
            e.preventDefault();
            void setCashAmount();
          }}
        >
          <label className="pf-field" style={FIELD_STYLE}>
            <span>{t("pfCash")}</span>
            <input id="pf-cash-input" value={cash} onChange={(e) => setCash(e.target.value)} />
          </label>
          <button id="pf-cash-submit" type="submit" disabled={busy}>
            {t("pfSetCash")}
          </button>
        </form>
      )}
      {/* below the table and forms: loading late, it moves nothing under the pointer */}
      {page && <AccountRiskSection reload={page} />}
      <Journal onChanged={() => void load()} refreshKey={page} />
    </section>
  );
}
