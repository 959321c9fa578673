// A holding's stop-loss and target (take-profit) price, set while the position is being
// edited on the portfolio page. The alerts check fires when a close reaches either (no rule
// needed). Empty clears one; the backend refuses a target at or under the stop and says why.
import { useContext, useEffect, useState } from "react";
import { commands, type PortfolioPage, type PositionRow } from "../bindings";
import { LanguageContext } from "../i18n";
import { parseNumber, workspaceErrorText } from "./workspaceModel";
import { useWorkspaceText } from "./workspaceText";

const TEXT = {
  zh: { title: "止损价与目标价", stop: "止损价", target: "目标价", save: "保存", hint: "收盘价触及任一价位时提醒（留空即清除）", notNumber: "「{field}」不是数字", saved: "已保存" },
  en: { title: "Stop-loss and target", stop: "Stop-loss", target: "Target", save: "Save", hint: "An alert fires when a close reaches either (empty clears it)", notNumber: "{field} is not a number", saved: "Saved" },
} as const;
type Key = keyof (typeof TEXT)["en"];

const shown = (v: number | null) => (v === null ? "" : String(v));

/** The typed levels: a number, null for empty, or the field that is no number. */
export function parseLevels(stop: string, target: string): { stop: number | null; target: number | null } | { bad: "stop" | "target" } {
  const s = parseNumber(stop);
  const tg = parseNumber(target);
  if (stop.trim() !== "" && s === null) return { bad: "stop" };
  if (target.trim() !== "" && tg === null) return { bad: "target" };
  return { stop: s, target: tg };
}

export default function PositionLevels({ row, onSaved }: { row: PositionRow; onSaved: (page: PortfolioPage) => void }) {
  const lang = useContext(LanguageContext);
  const wt = useWorkspaceText();
  const text = TEXT[lang === "en" ? "en" : "zh"];
  const t = (k: Key, field?: string) => text[k].replace("{field}", field ?? "");
  const [stop, setStop] = useState(shown(row.stop_loss));
  const [target, setTarget] = useState(shown(row.target_price));
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);
  // Another holding: its own levels. (Not on a change of this row's levels: that is the
  // save just made, whose note stays.)
  useEffect(() => {
    setStop(shown(row.stop_loss));
    setTarget(shown(row.target_price));
    setNote(null);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [row.code]);

  const save = async () => {
    const levels = parseLevels(stop, target);
    if ("bad" in levels) {
      setNote({ ok: false, text: t("notNumber", t(levels.bad)) });
      return;
    }
    const r = await commands.portfolioSetLevels(row.code, levels.stop, levels.target);
    if (r.status === "ok") {
      setNote({ ok: true, text: t("saved") });
      onSaved(r.data);
    } else setNote({ ok: false, text: workspaceErrorText(r.error, wt, lang) });
  };

  return (
    <form
      className="pf-levels"
      id="pf-levels"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <strong>{t("title")}</strong>{" "}
      <label className="pf-field">
        <span>{t("stop")}</span> <input id="pf-stop-input" value={stop} size={8} onChange={(e) => setStop(e.target.value)} />
      </label>{" "}
      <label className="pf-field">
        <span>{t("target")}</span> <input id="pf-target-input" value={target} size={8} onChange={(e) => setTarget(e.target.value)} />
      </label>{" "}
      <button id="pf-levels-save" type="submit">
        {t("save")}
      </button>
      <p className="muted">{t("hint")}</p>
      {note && (
        <p id="pf-levels-note" className={note.ok ? "ok" : "error"} role={note.ok ? "status" : "alert"}>
          {note.text}
        </p>
      )}
    </form>
  );
}
