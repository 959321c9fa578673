// Settings → Chat bots: each bot with who serves it and its paired senders (who may
// approve from the chat is a checkbox), the pairing codes waiting for the owner (approve
// one after a confirming dialog, or type the code a sender read out), unpair; add a bot
// with its token (sent once to the keychain, never read back) or remove one.
import { useCallback, useContext, useEffect, useState } from "react";
import { commands, type BotView, type BotsView, type CommandError, type PairingView } from "../bindings";
import { LanguageContext } from "../i18n";
import { botsText, type BotsT } from "./text";

const KINDS = ["telegram", "dingtalk", "feishu", "wecom"] as const;

/** Who serves the bot, as the panel says it. */
export function serverText(bot: BotView, t: BotsT): string {
  const s = bot.server;
  if (!s) return bot.token_set ? t("notServed") : t("notServedNoToken");
  const who = s.here ? t("servedHere") : s.front === "app" ? t("servedByOtherApp") : t("servedByCli");
  return `${who} · ${t("since", { at: new Date(s.since).toLocaleString() })}`;
}

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
  const [confirming, setConfirming] = useState<PairingView | null>(null);
  const [form, setForm] = useState({ name: "", kind: "telegram", apiUrl: "", token: "" });

  const load = useCallback(async () => {
    const res = await commands.botsView();
    if (res.status === "ok") setView(res.data);
    else setMessage({ ok: false, text: t("failed", { message: res.error.message }) });
  }, [lang]);

  useEffect(() => {
    void load();
    // Who serves a bot changes without the panel (the app's loop starting, the daemon).
    const timer = window.setInterval(() => void load(), 5000);
    return () => window.clearInterval(timer);
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

  const add = async () => {
    setMessage(null);
    const name = form.name.trim();
    const res = await commands.botAdd(name, form.kind, form.apiUrl.trim() === "" ? null : form.apiUrl.trim(), form.token);
    if (res.status === "ok") setForm({ name: "", kind: "telegram", apiUrl: "", token: "" });
    await done(res, t("added", { name }));
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
          <p className="bot-server" data-serving={b.server ? (b.server.here ? "here" : b.server.front) : "none"}>
            {serverText(b, t)}
          </p>
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
          <button type="button" className="bot-remove" onClick={() => void commands.botRemove(b.name).then((r) => done(r))}>
            {t("remove")}
          </button>
        </div>
      ))}
      <h3>{t("pending")}</h3>
      {view && view.pending.length === 0 && <p className="muted">{t("noPending")}</p>}
      <ul>
        {view?.pending.map((p) => (
          <li key={p.code} data-code={p.code}>
            <code>{p.code}</code> {t("pairAs", { label: p.label, bot: p.bot })} · {t("expires", { at: new Date(p.expires_at).toLocaleString() })}{" "}
            <button type="button" className="primary" onClick={() => setConfirming(p)}>
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
      {confirming && (
        <div className="modal-backdrop">
          <div className="modal" role="dialog" aria-modal="true" aria-labelledby="bot-pair-confirm-title" id="bot-pair-confirm">
            <h3 id="bot-pair-confirm-title">{t("confirmTitle")}</h3>
            <p>{t("confirmBody", { label: confirming.label, sender: confirming.sender_id, bot: confirming.bot, code: confirming.code })}</p>
            <div className="actions">
              <button type="button" onClick={() => setConfirming(null)}>
                {t("cancel")}
              </button>
              <button
                type="button"
                className="primary"
                id="bot-pair-confirm-ok"
                onClick={() => {
                  const code = confirming.code;
                  setConfirming(null);
                  void pair(code);
                }}
              >
                {t("pair")}
              </button>
            </div>
          </div>
        </div>
      )}
      <h3>{t("addTitle")}</h3>
      <form
        id="bot-add-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (form.name.trim() !== "" && form.token.trim() !== "") void add();
        }}
      >
        <label className="field">
          <span>{t("name")}</span>
          <input id="bot-add-name" value={form.name} maxLength={32} onChange={(e) => setForm({ ...form, name: e.target.value })} />
        </label>
        <label className="field">
          <span>{t("kind")}</span>
          <select id="bot-add-kind" value={form.kind} onChange={(e) => setForm({ ...form, kind: e.target.value })}>
            {KINDS.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>{t("token")}</span>
          <input id="bot-add-token" type="password" autoComplete="off" value={form.token} onChange={(e) => setForm({ ...form, token: e.target.value })} />
        </label>
        <label className="field">
          <span>{t("apiUrl")}</span>
          <input id="bot-add-api-url" value={form.apiUrl} placeholder="https://api.telegram.org" onChange={(e) => setForm({ ...form, apiUrl: e.target.value })} />
        </label>
        <button id="bot-add" type="submit">
          {t("add")}
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
