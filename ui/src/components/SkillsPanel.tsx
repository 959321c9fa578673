import { useCallback, useEffect, useState } from "react";
import { commands, type CommandError, type SkillsView } from "../bindings";
import { chatErrorText } from "../format";
import { useT } from "../i18n";

/** Settings → Skills: what `/` offers, the files that were skipped and why, and the folder. */
export default function SkillsPanel() {
  const t = useT();
  const [view, setView] = useState<SkillsView | null>(null);
  // Errors are kept as they came and worded at render (in the language shown then).
  const [note, setNote] = useState<{ ok: true; text: string } | { ok: false; error: CommandError } | null>(null);
  const load = useCallback(async () => {
    const r = await commands.listSkills();
    if (r.status === "ok") setView(r.data);
    else setNote({ ok: false, error: r.error });
  }, []);
  useEffect(() => {
    void load();
  }, [load]);
  const openFolder = async () => {
    const r = await commands.openSkillsFolder();
    setNote(r.status === "ok" ? { ok: true, text: `${t("skillsFolder")}: ${r.data}` } : { ok: false, error: r.error });
    void load();
  };
  return (
    <section className="card" id="skills-panel">
      <h2>{t("skillsTitle")}</h2>
      <p className="muted">{t("skillsIntro")}</p>
      {view && (
        <>
          <ul className="skills-list">
            {view.skills.map((s) => (
              <li key={s.name} data-skill={s.name} data-origin={s.origin.type}>
                <code>/{s.name}</code> {s.description}{" "}
                <span className="badge">{s.origin.type === "builtin" ? t("skillBuiltin") : t("skillUser")}</span>
                {s.origin.type === "user" && <div className="hint">{s.origin.path}</div>}
              </li>
            ))}
          </ul>
          {view.warnings.length > 0 && (
            <div className="warning" id="skills-warnings" role="alert">
              {t("skillsWarnings")}
              <ul>
                {view.warnings.map((w) => (
                  <li key={w.path} data-path={w.path}>
                    <code>{w.path}</code>: {w.message}
                  </li>
                ))}
              </ul>
            </div>
          )}
          <p className="hint">
            {t("skillsFolder")}: <code id="skills-dir">{view.dir}</code>
          </p>
        </>
      )}
      <p className="muted">{t("skillsHowTo")}</p>
      <div className="row">
        <button type="button" id="skills-open-folder" onClick={() => void openFolder()}>
          {t("skillsOpenFolder")}
        </button>
        <button type="button" id="skills-reload" onClick={() => void load()}>
          ↻
        </button>
      </div>
      {note && (
        <p id="skills-note" className={note.ok ? "hint" : "error"}>
          {note.ok ? note.text : chatErrorText(note.error, t)}
        </p>
      )}
    </section>
  );
}
