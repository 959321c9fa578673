// Chart notes: the boxes, lines and text notes the agent (annotate_chart)
// or the user drew on a stock's chart — their words for the list beside the chart, where
// they land on the bars, and the user's form read into a shape.
import type { Annotation, Shape } from "../bindings";
import { localTexts } from "../i18n";
import { isoDate } from "./stockModel";

/** Each author's own colour, apart from the engine's marks and levels. */
export const AGENT_COLOR = "#c026d3";
export const USER_COLOR = "#0f766e";

export function noteColor(a: Annotation): string {
  return a.author.type === "agent" ? AGENT_COLOR : USER_COLOR;
}

const zh = {
  title: "图上标注",
  none: "还没有标注。",
  box: "区间框",
  line: "支撑/阻力线",
  text: "文字",
  agent: "Agent（对话 {id}）",
  user: "我",
  remove: "删除",
  add: "标注…",
  kind: "类型",
  from: "起",
  to: "止",
  low: "下沿",
  high: "上沿",
  price: "价格",
  date: "日期",
  words: "文字",
  save: "画上",
  cancel: "取消",
  pickHint: "点图上的一根 K 线可填入日期和价格。",
  badNumber: "{field} 不是有效的数字",
  badDate: "{field} 不是日期（YYYY-MM-DD）",
  allChart: "全图",
};
const en: typeof zh = {
  title: "Chart notes",
  none: "No notes yet.",
  box: "Range box",
  line: "Support/resistance",
  text: "Text",
  agent: "Agent (conversation {id})",
  user: "You",
  remove: "Remove",
  add: "Note…",
  kind: "Kind",
  from: "From",
  to: "To",
  low: "Low",
  high: "High",
  price: "Price",
  date: "Date",
  words: "Text",
  save: "Draw",
  cancel: "Cancel",
  pickHint: "Click a bar on the chart to fill in its date and price.",
  badNumber: "{field} is not a number",
  badDate: "{field} is not a date (YYYY-MM-DD)",
  allChart: "whole chart",
};
export type NoteTextKey = keyof typeof zh;
export const notesText = localTexts(zh, en);

/** "2020-06-17 09:02" in local time from the stored RFC 3339 instant. */
export function whenText(rfc3339: string): string {
  const d = new Date(rfc3339);
  if (Number.isNaN(d.getTime())) return rfc3339;
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** Who drew it, in words. */
export function authorText(a: Annotation, lang: string): string {
  const t = notesText(lang);
  return a.author.type === "agent" ? t("agent", { id: a.author.conversation.slice(0, 8) }) : t("user");
}

/** What is drawn, in words: "区间框 2020-01-02 → 2020-03-02 · 12.5–14.1". */
export function shapeText(s: Shape, lang: string): string {
  const t = notesText(lang);
  switch (s.kind) {
    case "box":
      return `${t("box")} ${isoDate(s.from)} → ${isoDate(s.to)} · ${s.low}–${s.high}`;
    case "line": {
      const span = s.from != null || s.to != null ? ` · ${s.from != null ? isoDate(s.from) : "…"} → ${s.to != null ? isoDate(s.to) : "…"}` : ` · ${t("allChart")}`;
      return `${t("line")} ${s.price}${span}`;
    }
    case "text":
      return `${t("text")} ${isoDate(s.date)}: ${s.text}`;
  }
}

/** The full line of the list (and the chart's tooltip): shape, author and time. */
export function noteText(a: Annotation, lang: string): string {
  return `${shapeText(a.shape, lang)} — ${authorText(a, lang)} · ${whenText(a.created_at)}`;
}

/** The first bar on or after `d` (the last bar when `d` is past them all); `null` without bars. */
export function barOnOrAfter(dates: number[], d: number): number | null {
  if (dates.length === 0) return null;
  for (const x of dates) if (x >= d) return x;
  return dates[dates.length - 1];
}

/** The last bar on or before `d` (the first bar when `d` is before them all). */
export function barOnOrBefore(dates: number[], d: number): number | null {
  if (dates.length === 0) return null;
  let out = dates[0];
  for (const x of dates) if (x <= d) out = x;
  return out;
}

/** Where a note lands on the chart's bars (YYYY-MM-DD times for the library): dates
 * between bars snap inward to a bar; a line without dates spans the whole chart (`null`). */
export type Placed =
  | { kind: "box"; from: string; to: string; low: number; high: number; color: string; title: string }
  | { kind: "line"; from: string | null; to: string | null; price: number; color: string; title: string }
  | { kind: "text"; date: string; price: number; text: string; color: string; title: string };

export function place(notes: Annotation[], dates: number[], highs: (number | null)[], lang: string): Placed[] {
  const out: Placed[] = [];
  for (const a of notes) {
    const color = noteColor(a);
    const title = noteText(a, lang);
    const s = a.shape;
    if (s.kind === "box") {
      const from = barOnOrAfter(dates, s.from);
      const to = barOnOrBefore(dates, s.to);
      if (from == null || to == null || from > to || s.low == null || s.high == null) continue;
      out.push({ kind: "box", from: isoDate(from), to: isoDate(to), low: s.low, high: s.high, color, title });
    } else if (s.kind === "line") {
      const from = s.from != null ? barOnOrAfter(dates, s.from) : null;
      const to = s.to != null ? barOnOrBefore(dates, s.to) : null;
      if (s.price == null) continue;
      out.push({ kind: "line", from: from != null ? isoDate(from) : null, to: to != null ? isoDate(to) : null, price: s.price, color, title });
    } else {
      const d = barOnOrAfter(dates, s.date);
      if (d == null) continue;
      const high = highs[dates.indexOf(d)];
      if (high == null) continue;
      out.push({ kind: "text", date: isoDate(d), price: high, text: s.text, color, title });
    }
  }
  return out;
}

/** The user's form as typed. */
export interface NoteForm {
  kind: "box" | "line" | "text";
  from: string;
  to: string;
  low: string;
  high: string;
  price: string;
  date: string;
  text: string;
}

function num(v: string, field: string, lang: string): number {
  const x = Number(v.trim());
  if (v.trim() === "" || !Number.isFinite(x)) throw new Error(notesText(lang)("badNumber", { field }));
  return x;
}

function day(v: string, field: string, lang: string): number {
  const m = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(v.trim());
  if (!m) throw new Error(notesText(lang)("badDate", { field }));
  return Number(`${m[1]}${m[2]}${m[3]}`);
}

function optDay(v: string, field: string, lang: string): number | null {
  return v.trim() === "" ? null : day(v, field, lang);
}

/** The shape the form describes; a field that is not a number or a date is an error
 * naming it (the rest — order, low ≤ high, listed code — the app checks). */
export function formShape(f: NoteForm, lang: string): Shape {
  const t = notesText(lang);
  switch (f.kind) {
    case "box":
      return { kind: "box", from: day(f.from, t("from"), lang), to: day(f.to, t("to"), lang), low: num(f.low, t("low"), lang), high: num(f.high, t("high"), lang) };
    case "line":
      return { kind: "line", price: num(f.price, t("price"), lang), from: optDay(f.from, t("from"), lang), to: optDay(f.to, t("to"), lang) };
    case "text":
      return { kind: "text", date: day(f.date, t("date"), lang), text: f.text };
  }
}

/** The form prefilled from a picked bar: its date in every date field, its price in every
 * price field (a range box a little either side of it). */
export function formAt(kind: NoteForm["kind"], date: number | null, price: number | null): NoteForm {
  const d = date != null ? isoDate(date) : "";
  const p = price != null ? String(Math.round(price * 100) / 100) : "";
  return { kind, from: kind === "line" ? "" : d, to: kind === "line" ? "" : d, low: p, high: p, price: p, date: d, text: "" };
}
