// Settings → Push channels: the channels with their latest push, a test send
// with what the channel answered, remove; the add form (a robot's token and signing secret, a webhook's secret with the header or query parameter it goes in,
// an e-mail channel's SMTP password, go to the keychain through the backend and are never
// shown again). Each channel's
// events — alerts, finished tasks, finished schedules, approvals waiting — are checkboxes.
import { useCallback, useEffect, useState } from "react";
import { commands, type ChannelView, type CommandError, type TestResult } from "../bindings";
import { useAlertsText, type T } from "./alerts";

const KINDS = ["webhook", "wecom", "dingtalk", "feishu", "telegram", "email"] as const;
type Kind = (typeof KINDS)[number];
/** What a channel can be sent, in the backend's order. */
export const EVENTS = ["alerts", "tasks", "schedules", "approvals"] as const;
type PushEventName = (typeof EVENTS)[number];

/** The channel's events with `e` turned on or off, in the fixed order. */
export function toggled(events: string[], e: PushEventName, on: boolean): PushEventName[] {
  return EVENTS.filter((x) => (x === e ? on : events.includes(x)));
}

const KIND_NAMES: Record<Kind, string> = { webhook: "Webhook", wecom: "企业微信 WeCom", dingtalk: "钉钉 DingTalk", feishu: "飞书 Feishu", telegram: "Telegram", email: "电子邮件 E-mail" };

type SecretIn = "header" | "query";
type Form = { name: string; kind: Kind; url: string; chatId: string; token: string; sign: string; allowPrivate: boolean; from: string; to: string; user: string; ca: string; secretIn: SecretIn; secretName: string };
const EMPTY: Form = { name: "", kind: "webhook", url: "", chatId: "", token: "", sign: "", allowPrivate: false, from: "", to: "", user: "", ca: "", secretIn: "header", secretName: "" };

/** The recipients typed in one field: separated by commas, semicolons or new lines. */
export function recipients(text: string): string[] {
  return text
    .split(/[,;，；\n]/)
    .map((a) => a.trim())
    .filter((a) => a !== "");
}

export function errorText(e: CommandError | string, t: T): string {
  if (typeof e === "string") return t("other", { message: e });
  switch (e.kind) {
    case "invalid_input":
      return t("invalid", { message: e.message });
    case "not_found":
      return t("notFound", { message: e.message });
    // The only thing a channel's commands find unavailable is the keychain.
    case "unavailable":
      return t("keychain", { message: e.message });
    default:
      return t("other", { message: e.message });
  }
}

export function testText(r: TestResult, t: T): string {
  const status = r.http_status == null ? "—" : String(r.http_status);
  // A mail server answers with an SMTP reply, not an HTTP status.
  if (r.ok && r.http_status == null) return t("pushTestOkAnswer", { answer: r.answer });
  return r.ok ? t("pushTestOk", { status }) : t("pushTestFailed", { status, answer: r.answer });
}

export default function PushPanel() {
  const t = useAlertsText();
  const [channels, setChannels] = useState<ChannelView[] | null>(null);
  const [form, setForm] = useState<Form>(EMPTY);
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);
  const [tests, setTests] = useState<Record<string, { busy: boolean; result?: TestResult; error?: string }>>({});

  const load = useCallback(async () => {
    const r = await commands.pushChannels();
    if (r.status === "ok") setChannels(r.data);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  const set = <K extends keyof Form>(k: K, v: Form[K]) => setForm((f) => ({ ...f, [k]: v }));
  const email = form.kind === "email";
  const robot = form.kind !== "webhook" && !email;
  const webhook = form.kind === "webhook";

  const add = async () => {
    setNote(null);
    const opt = (v: string) => (v.trim() === "" ? null : v.trim());
    const addresses = email ? { from: form.from.trim(), to: recipients(form.to), user: opt(form.user), ca_cert: opt(form.ca) } : null;
    const r = await commands.pushAdd(
      form.name.trim(),
      form.kind,
      opt(form.url),
      form.kind === "webhook" && form.allowPrivate,
      form.kind === "telegram" ? opt(form.chatId) : null,
      addresses,
      {
        token: opt(form.token),
        sign_secret: form.kind === "dingtalk" || form.kind === "feishu" ? opt(form.sign) : null,
        // A webhook's secret goes in the named header (none named: Authorization: Bearer) or query parameter.
        secret_header: webhook && form.secretIn === "header" ? opt(form.secretName) : null,
        secret_query: webhook && form.secretIn === "query" ? opt(form.secretName) || "token" : null,
      },
    );
    if (r.status === "ok") {
      setNote({ ok: true, text: t("pushAdded", { name: r.data.name }) });
      setForm(EMPTY);
      await load();
    } else setNote({ ok: false, text: errorText(r.error, t) });
  };

  const test = async (name: string) => {
    setTests((m) => ({ ...m, [name]: { busy: true } }));
    const r = await commands.pushTest(name);
    setTests((m) => ({ ...m, [name]: r.status === "ok" ? { busy: false, result: r.data } : { busy: false, error: errorText(r.error, t) } }));
    await load();
  };

  const setEvents = async (c: ChannelView, e: PushEventName, on: boolean) => {
    setNote(null);
    const r = await commands.pushSetEvents(c.name, toggled(c.events, e, on));
    if (r.status === "ok") setChannels((list) => list?.map((x) => (x.name === c.name ? r.data : x)) ?? null);
    else setNote({ ok: false, text: errorText(r.error, t) });
  };

  const remove = async (name: string) => {
    const r = await commands.pushRemove(name);
    if (r.status === "error") setNote({ ok: false, text: errorText(r.error, t) });
    await load();
  };

  return (
    <section className="card" id="push-panel">
      <h2>{t("pushTitle")}</h2>
      <p className="muted">{t("pushIntro")}</p>
      {channels !== null && channels.length === 0 && <p className="hint">{t("pushNone")}</p>}
      {channels !== null && channels.length > 0 && (
        <ul className="push-list">
          {channels.map((c) => {
            const st = tests[c.name];
            return (
              <li key={c.name} className="push-channel" data-name={c.name} data-kind={c.kind} data-has-token={c.has_token}>
                <strong>{c.name}</strong> <span className="muted">{KIND_NAMES[c.kind as Kind] ?? c.kind}</span> <span className="push-url">{c.url}</span>
                {c.email && <span className="push-to">{t("pushRecipients", { to: c.email.to.join(", ") })}</span>}
                {c.email?.ca_cert && (
                  <span className="push-ca" title={c.email.ca_cert}>
                    {t("pushCaTrusted", { path: c.email.ca_cert })}
                  </span>
                )}
                {c.has_token && <span className="badge">{c.kind === "email" ? t("pushPasswordSet") : t("pushTokenSet")}</span>}
                {c.secret_in && <span className="push-secret-in muted">{c.secret_in}</span>}
                {c.last && (
                  <span className={`push-last ${c.last.status}`} data-status={c.last.status}>
                    {c.last.error ? t("pushLastError", { status: t(`s_${c.last.status}` as "s_sent"), error: c.last.error }) : t("pushLast", { status: t(`s_${c.last.status}` as "s_sent") })}
                  </span>
                )}
                <span className="push-events" role="group" aria-label={t("pushEvents")}>
                  {t("pushEvents")}:
                  {EVENTS.map((e) => (
                    <label key={e} className="inline">
                      <input type="checkbox" className={`push-event-${e}`} checked={c.events.includes(e)} onChange={(ev) => void setEvents(c, e, ev.target.checked)} />
                      {t(`ev_${e}`)}
                    </label>
                  ))}
                </span>
                <button type="button" className="push-test" disabled={st?.busy} onClick={() => void test(c.name)}>
                  {st?.busy ? t("pushTesting") : t("pushTest")}
                </button>
                <button type="button" className="push-remove" onClick={() => void remove(c.name)}>
                  {t("pushRemove")}
                </button>
                {st?.result && (
                  <p className={`push-test-result ${st.result.ok ? "ok" : "error"}`} data-ok={st.result.ok} role="status">
                    {testText(st.result, t)}
                  </p>
                )}
                {st?.error && (
                  <p className="push-test-result error" role="alert">
                    {st.error}
                  </p>
                )}
              </li>
            );
          })}
        </ul>
      )}
      <form
        id="push-form"
        className="alert-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void add();
        }}
      >
        <div className="row">
          <input id="push-name" placeholder={t("pushName")} value={form.name} size={12} onChange={(e) => set("name", e.target.value)} />
          <select id="push-kind" value={form.kind} onChange={(e) => set("kind", e.target.value as Kind)} aria-label={t("pushKind")}>
            {KINDS.map((k) => (
              <option key={k} value={k}>
                {KIND_NAMES[k]}
              </option>
            ))}
          </select>
          <input id="push-url" placeholder={email ? t("pushUrlSmtp") : robot ? `${t("pushUrl")} (${t("pushUrlOfficial")})` : t("pushUrl")} value={form.url} size={34} onChange={(e) => set("url", e.target.value)} />
        </div>
        {email && (
          <div className="row">
            <input id="push-from" placeholder={t("pushFrom")} aria-label={t("pushFrom")} value={form.from} onChange={(e) => set("from", e.target.value)} />
            <input id="push-to" placeholder={t("pushTo")} aria-label={t("pushTo")} value={form.to} size={30} onChange={(e) => set("to", e.target.value)} />
            <input id="push-user" placeholder={t("pushUser")} aria-label={t("pushUser")} autoComplete="off" value={form.user} onChange={(e) => set("user", e.target.value)} />
            <input id="push-password" type="password" autoComplete="off" placeholder={t("pushPassword")} aria-label={t("pushPassword")} value={form.token} onChange={(e) => set("token", e.target.value)} />
            <input id="push-ca" placeholder={t("pushCa")} aria-label={t("pushCa")} value={form.ca} size={30} onChange={(e) => set("ca", e.target.value)} />
          </div>
        )}
        <div className="row">
          {robot && <input id="push-token" type="password" autoComplete="off" placeholder={t("pushToken")} value={form.token} onChange={(e) => set("token", e.target.value)} />}
          {(form.kind === "dingtalk" || form.kind === "feishu") && <input id="push-sign" type="password" autoComplete="off" placeholder={t("pushSign")} value={form.sign} onChange={(e) => set("sign", e.target.value)} />}
          {form.kind === "telegram" && <input id="push-chat-id" placeholder={t("pushChatId")} value={form.chatId} onChange={(e) => set("chatId", e.target.value)} />}
          {webhook && (
            <>
              <input id="push-webhook-secret" type="password" autoComplete="off" placeholder={t("pushWebhookSecret")} aria-label={t("pushWebhookSecret")} value={form.token} onChange={(e) => set("token", e.target.value)} />
              <select id="push-secret-in" aria-label={t("pushSecretIn")} value={form.secretIn} onChange={(e) => set("secretIn", e.target.value as SecretIn)}>
                <option value="header">{t("pushSecretHeader")}</option>
                <option value="query">{t("pushSecretQuery")}</option>
              </select>
              <input id="push-secret-name" placeholder={form.secretIn === "header" ? "Authorization: Bearer" : "token"} aria-label={t("pushSecretName")} value={form.secretName} size={16} onChange={(e) => set("secretName", e.target.value)} />
            </>
          )}
          {webhook && (
            <label className="inline">
              <input type="checkbox" id="push-private" checked={form.allowPrivate} onChange={(e) => set("allowPrivate", e.target.checked)} />
              {t("pushPrivate")}
            </label>
          )}
          <button id="push-add" type="submit">
            {t("pushAdd")}
          </button>
        </div>
        {note && (
          <p id="push-note" className={note.ok ? "ok" : "error"} role={note.ok ? "status" : "alert"}>
            {note.text}
          </p>
        )}
      </form>
    </section>
  );
}
