import { useState } from "react";
import { commands, type Settings, type SettingsView } from "../bindings";
import { useT } from "../i18n";
import { settingsErrorText } from "../format";
import KeysPanel from "../components/KeysPanel";
import LocalToolsPanel from "../components/LocalToolsPanel";
import SkillsPanel from "../components/SkillsPanel";
import ModelsPanel, { modelsProblem } from "../components/ModelsPanel";
import SchedulesPanel from "../schedules/SchedulesPanel";
import PushPanel from "../alerts/PushPanel";
import IntradayIntervalField from "../alerts/IntradayIntervalField";
import McpPanel from "../mcp/McpPanel";
import BotsPanel from "../bots/BotsPanel";
import { RiskSettingsPanel } from "../risk/RiskViews";
import UpdatePanel from "../updater/UpdatePanel";
import AutoCheckField from "../updater/AutoCheckField";

interface Props {
  view: SettingsView;
  onSaved: (s: Settings) => void;
  /** Ask the agent (prefills the chat): from a scheduled screen's result. */
  onAsk: (text: string) => void;
}

function NumberField({ id, label, value, onChange }: { id: string; label: string; value: number; onChange: (n: number) => void }) {
  return (
    <label className="field" htmlFor={id}>
      <span>{label}</span>
      <input id={id} type="number" value={Number.isFinite(value) ? value : ""} onChange={(e) => onChange(e.target.valueAsNumber)} />
    </label>
  );
}

export default function SettingsPage({ view, onSaved, onAsk }: Props) {
  const t = useT();
  const [draft, setDraft] = useState<Settings>(view.settings);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const set = <K extends keyof Settings>(k: K, v: Settings[K]) => setDraft({ ...draft, [k]: v });

  const save = async () => {
    setMessage(null);
    // A field the backend could not even read (a fractional context window) is caught here.
    const problem = modelsProblem(draft, t);
    if (problem) {
      setMessage({ ok: false, text: problem });
      return;
    }
    // Non-numbers (an emptied field) become NaN; the backend rejects them with a clear message.
    const res = await commands.updateSettings(draft);
    if (res.status === "ok") {
      onSaved(res.data);
      setMessage({ ok: true, text: t("saved") });
    } else {
      setMessage({ ok: false, text: settingsErrorText(res.error, t) });
    }
  };

  return (
    <section className="page" id="page-settings">
      <h1>{t("navSettings")}</h1>
      {view.problem && (
        <p className="notice error" role="alert">
          {t("settingsProblem")} {view.problem}
        </p>
      )}
      {/* Fields are checked here and by the backend, with messages of their own. */}
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <section className="card">
          <h2>{t("general")}</h2>
          <label className="field">
            <span>{t("language")}</span>
            <select id="set-language" value={draft.language} onChange={(e) => set("language", e.target.value as Settings["language"])}>
              <option value="zh">中文</option>
              <option value="en">English</option>
            </select>
          </label>
          <label className="field">
            <span>{t("theme")}</span>
            <select id="set-theme" value={draft.theme} onChange={(e) => set("theme", e.target.value as Settings["theme"])}>
              <option value="system">{t("themeSystem")}</option>
              <option value="light">{t("themeLight")}</option>
              <option value="dark">{t("themeDark")}</option>
            </select>
          </label>
          <label className="inline">
            <input id="set-close-to-tray" type="checkbox" checked={draft.close_to_tray} onChange={(e) => set("close_to_tray", e.target.checked)} />
            {t("closeToTray")}
          </label>
          <label className="inline">
            <input type="checkbox" checked={draft.notifications} onChange={(e) => set("notifications", e.target.checked)} />
            {t("notifications")}
          </label>
          <AutoCheckField value={draft.check_for_updates} onChange={(on) => set("check_for_updates", on)} />
        </section>
        <ModelsPanel settings={draft} onChange={setDraft} />
        <section className="card">
          <h2>{t("timeouts")}</h2>
          <NumberField id="set-stream-idle" label={t("streamIdle")} value={draft.stream_idle_timeout_secs} onChange={(n) => set("stream_idle_timeout_secs", n)} />
          <NumberField id="set-tool-timeout" label={t("toolTimeout")} value={draft.tool_timeout_secs} onChange={(n) => set("tool_timeout_secs", n)} />
          <NumberField id="set-approval-timeout" label={t("approvalTimeout")} value={draft.approval_timeout_secs} onChange={(n) => set("approval_timeout_secs", n)} />
          <NumberField id="set-retention-days" label={t("retentionDays")} value={draft.retention_days} onChange={(n) => set("retention_days", n)} />
          <label className="field">
            <span>{t("proxy")}</span>
            <input id="set-proxy" value={draft.proxy ?? ""} onChange={(e) => set("proxy", e.target.value.trim() === "" ? null : e.target.value.trim())} />
          </label>
        </section>
        <LocalToolsPanel settings={draft} onChange={setDraft} />
        <RiskSettingsPanel value={draft.risk} onChange={(v) => set("risk", v)} />
        <IntradayIntervalField value={draft.intraday_alert_minutes} onChange={(n) => set("intraday_alert_minutes", n)} />
        <div className="actions">
          <button id="settings-save" className="primary" type="submit">
            {t("save")}
          </button>
          {message && (
            <span id="settings-message" className={message.ok ? "ok" : "error"} role={message.ok ? "status" : "alert"}>
              {message.text}
            </span>
          )}
        </div>
      </form>
      <KeysPanel />
      <SkillsPanel />
      <SchedulesPanel onAsk={onAsk} />
      <PushPanel />
      <McpPanel />
      <BotsPanel />
      <UpdatePanel />
    </section>
  );
}
