// Settings → Chat bots: each bot with its paired senders (who may approve from the chat
// is a checkbox), the pairing codes waiting for the owner (approve one with a click, or
// type the code a sender read out), unpair. Bots and their tokens are added with the CLI;
// a token never reaches the webview.
import { useCallback, useContext, useEffect, useState } from "react";
import { commands, type BotsView, type CommandError } from "../bindings";
import { LanguageContext } from "../i18n";
import { botsText } from "./text";

/** A code as typed: case, spaces and dashes do not matter (the backend agrees). */
export function normalizeCode(text: string): string {
  return text.replace(/[\s-]/g, "").toUpperCase();
}

export default function BotsPanel() {
  const lang = useContext(LanguageContext);
  const t = botsText(lang);
  const [view, setView] = useState<BotsView | null>(null);
  const [code, setCode] = useState("");
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);

  const load = useCallback(async () => {
    const res = await commands.botsView();
    if (res.status === "ok") setView(res.data);
    else setMessage({ ok: false, text: t("failed", { message: res.error.message }) });
  }, [lang]);

  useEffect(() => {
    void load();
  }, [load]);

  const done = async (res: { status: "ok" } | { status: "error"; error: CommandError }, ok?: string) => {
    if (res.status === "ok") {
      if (ok) setMessage({ ok: true, text: ok });
    } else {
      setMessage({ ok: false, text: t("failed", { message: res.error.message }) });
    }
    await load();
  };

  const pair = async (c: string) => {
    setMessage(null);
    const res = await commands.botPair(normalizeCode(c));
    if (res.status === "ok") setCode("");
    await done(res, t("paired"));
  };

  return (
    <section className="card" id="bots-panel">
      <h2>{t("title")}</h2>
      <p className="muted">{t("intro")}</p>
      {view && view.bots.length === 0 && <p className="muted">{t("none")}</p>}
      {view?.bots.map((b) => (
        <div key={b.name} className="bot" data-bot={b.name}>
          <h3>
            {b.name} · {b.kind} · {b.token_set ? t("tokenSet") : t("tokenMissing")}
          </h3>
          <p className="muted">{t("limits", { tokens: b.daily_tokens, per: b.per_minute })}</p>
          {b.senders.length === 0 ? (
            <p className="muted">{t("noSenders")}</p>
          ) : (
            <ul aria-label={t("senders")}>
              {b.senders.map((s) => (
                <li key={s.sender_id} data-sender={s.sender_id}>
                  {s.label} ({s.sender_id})
                  <label className="inline">
                    <input type="checkbox" checked={s.approver} onChange={(e) => void commands.botSetApprover(b.name, s.sender_id, e.target.checked).then((r) => done(r))} />
                    {t("approver")}
                  </label>
                  <button type="button" onClick={() => void commands.botUnpair(b.name, s.sender_id).then((r) => done(r))}>
                    {t("unpair")}
                  </button>
                </li>
              ))}
            </ul>
          )}
        </div>
      ))}
      <h3>{t("pending")}</h3>
      {view && view.pending.length === 0 && <p className="muted">{t("noPending")}</p>}
      <ul>
        {view?.pending.map((p) => (
          <li key={p.code} data-code={p.code}>
            <code>{p.code}</code> {t("pairAs", { label: p.label, bot: p.bot })} · {t("expires", { at: new Date(p.expires_at).toLocaleString() })}{" "}
            <button type="button" className="primary" onClick={() => void pair(p.code)}>
              {t("pair")}
            </button>
          </li>
        ))}
      </ul>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (code.trim() !== "") void pair(code);
        }}
      >
        <label className="field">
          <span>{t("codeLabel")}</span>
          <input id="bot-pair-code" value={code} maxLength={12} onChange={(e) => setCode(e.target.value)} />
        </label>
        <button id="bot-pair" type="submit">
          {t("pair")}
        </button>
      </form>
      {message && (
        <p id="bots-message" className={message.ok ? "ok" : "error"} role={message.ok ? "status" : "alert"}>
          {message.text}
        </p>
      )}
    </section>
  );
}
