// What the map page and the overview make of the desk's market map: the ladder grouped by
// board height, the figures of the mood line and the notes in words. Pure, so tested alone.
import type { LadderStock, LimitDay, MapNote } from "../bindings";
import { MISSING, formatPct } from "../chat/diagnosis";

type T = (key: import("./text").MapKey, vars?: Record<string, string | number>) => string;

/** `YYYYMMDD` → `YYYY-MM-DD`. */
export function isoDay(d: number): string {
  const s = String(d);
  return `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}`;
}

/** The ladder by board height, the highest first; within a height, the engine's order. */
export function ladderGroups(ladder: LadderStock[]): { boards: number; stocks: LadderStock[] }[] {
  const groups = new Map<number, LadderStock[]>();
  for (const s of ladder) groups.set(s.boards, [...(groups.get(s.boards) ?? []), s]);
  return [...groups.entries()].sort((a, b) => b[0] - a[0]).map(([boards, stocks]) => ({ boards, stocks }));
}

/** The seal rate as a percentage with one decimal, or the missing mark. */
export function sealRateText(rate: number | null): string {
  return rate === null ? MISSING : `${(rate * 100).toFixed(1)}%`;
}

/** The mood line's figures, in order: [id, label, value]. */
export function moodFigures(l: LimitDay, t: T): [string, string, string][] {
  return [
    ["limit-up", t("limitUp"), String(l.limit_up)],
    ["limit-down", t("limitDown"), String(l.limit_down)],
    ["failed", t("failed"), String(l.failed)],
    ["highest-board", t("highestBoard"), String(l.highest_board)],
    ["premium", t("premium"), formatPct(l.premium_pct)],
    ["seal-rate", t("sealRate"), sealRateText(l.seal_rate)],
  ];
}

/** A note on the map's inputs in the page's language. */
export function noteText(n: MapNote, t: T): string {
  switch (n.type) {
    case "raw_closes_missing":
      return t("noteRaw", { a: n.previous_scale, b: n.adjusted });
    case "names_from_today":
      return t("noteNamesToday", { n: n.stocks });
    case "new_listings_without_limit":
      return t("noteNew", { n: n.stocks });
    case "skipped_stocks":
      return t("noteSkipped", { n: n.stocks });
    case "no_industries":
      return t("noteNoIndustries");
    case "industries_from_later_load":
      return t("noteLaterLoad", { n: n.stocks });
  }
}
