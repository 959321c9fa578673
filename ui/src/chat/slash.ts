// The composer's `/` commands: which skills match what is typed, and whether a `/word`
// names none. Mirrors the backend's rule (agent::skills::SkillSet::expand): `/word args`
// is a command; `/` followed by a space, or a path such as `/home/x`, is plain text.
import type { SkillView } from "../bindings";

/** The partial skill name while the palette should be open (`/che` → "che"), else null. */
export function slashQuery(input: string): string | null {
  const m = /^\/([^\s/]*)$/.exec(input.trimStart());
  return m ? m[1] : null;
}

/** Skills whose name starts with the query first, then those that contain it. */
export function filterSkills(skills: SkillView[], query: string): SkillView[] {
  const q = query.toLowerCase();
  const starts = skills.filter((s) => s.name.startsWith(q));
  const contains = skills.filter((s) => !s.name.startsWith(q) && (s.name.includes(q) || s.description.toLowerCase().includes(q)));
  return [...starts, ...contains];
}

/** The command word of `/word args`, or null when the text is not a command. */
export function commandWord(input: string): string | null {
  const m = /^\/(\S+)/.exec(input.trimStart());
  if (!m || m[1].includes("/")) return null;
  return m[1];
}

/** The `/word` that names no skill (the text must not be sent), or null. */
export function unknownCommand(input: string, skills: SkillView[]): string | null {
  const word = commandWord(input);
  return word !== null && !skills.some((s) => s.name === word) ? word : null;
}
