import type { SkillView } from "../bindings";
import { useT } from "../i18n";

export const PALETTE_ID = "slash-palette";
export const optionId = (name: string) => `slash-opt-${name}`;

/** The list of skills under the composer while `/name` is being typed. Keyboard use is
 * the composer's (↑ ↓ Enter Tab Esc); a click picks too. */
export default function SlashPalette({ skills, active, onPick }: { skills: SkillView[]; active: number; onPick: (s: SkillView) => void }) {
  const t = useT();
  if (skills.length === 0) {
    return (
      <div className="slash-palette empty" id={PALETTE_ID} role="listbox" aria-label={t("skillsTitle")}>
        <div className="hint">{t("slashNoMatch")}</div>
      </div>
    );
  }
  return (
    <ul className="slash-palette" id={PALETTE_ID} role="listbox" aria-label={t("skillsTitle")}>
      {skills.map((s, i) => (
        <li
          key={s.name}
          id={optionId(s.name)}
          role="option"
          aria-selected={i === active}
          className={i === active ? "active" : ""}
          data-skill={s.name}
          // mousedown, not click: the composer keeps the focus
          onMouseDown={(e) => {
            e.preventDefault();
            onPick(s);
          }}
        >
          <code>/{s.name}</code>
          <span className="slash-desc">{s.description}</span>
          <span className="badge">{s.origin.type === "builtin" ? t("skillBuiltin") : t("skillUser")}</span>
        </li>
      ))}
    </ul>
  );
}
