// Replay on the stock page, the parts without React: where the cursor
// goes, and the training score. The engine's marks and their known-on closes come from
// the backend's whole chart; nothing here recomputes the reading.
import type { ChartEvent } from "../bindings";

/** The labels a trainee may put on the newest bar, and "none". */
export const TRAINING_LABELS = ["SC", "AR", "ST", "Spring", "SOS", "LPS", "BC", "UTAD", "none"] as const;
export type TrainingLabel = (typeof TRAINING_LABELS)[number];

/** Bars after a labelled bar with no mark known on it before "none" is settled. */
export const SETTLE_BARS = 20;

/** The cursor: an index into the period's bar dates (YYYYMMDD). */
export type Cursor = { dates: number[]; index: number };

function toDate(d: number): Date {
  return new Date(Date.UTC(Math.floor(d / 10000), Math.floor(d / 100) % 100 - 1, d % 100));
}

/** "2024-03-15" → 20240315; `null` when it is not a date. */
export function parseIsoDate(text: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text.trim());
  if (!m) return null;
  const d = Number(m[1]) * 10000 + Number(m[2]) * 100 + Number(m[3]);
  const back = toDate(d);
  return back.getUTCMonth() + 1 === Number(m[2]) && back.getUTCDate() === Number(m[3]) ? d : null;
}

/**
 * The cursor for a chosen start: the last bar on or before it. `null` before the first
 * bar, or on the last (nothing would be left to replay).
 */
export function startAt(dates: number[], start: number): Cursor | null {
  let index = -1;
  for (let i = 0; i < dates.length && dates[i] <= start; i++) index = i;
  return index < 0 || index >= dates.length - 1 ? null : { dates, index };
}

export function atEnd(c: Cursor): boolean {
  return c.index >= c.dates.length - 1;
}

export function stepBar(c: Cursor): Cursor {
  return atEnd(c) ? c : { ...c, index: c.index + 1 };
}

/** Forward to the first bar at least seven calendar days after the cursor's (or the end). */
export function stepWeek(c: Cursor): Cursor {
  const target = toDate(c.dates[c.index]).getTime() + 7 * 86_400_000;
  let index = c.index + 1;
  while (index < c.dates.length - 1 && toDate(c.dates[index]).getTime() < target) index++;
  return { ...c, index: Math.min(index, c.dates.length - 1) };
}

/** A trainee's label on a bar, put there while that bar was the newest one shown. */
export type Guess = { date: number; label: TrainingLabel };
export type GuessResult = "pending" | "hit" | "miss";

/**
 * How a guess stands at the cursor. The engine's marks on that bar (from the as-known-then
 * list) settle it once the first of them is known: a hit when one carries the guessed
 * label. A bar the engine never marks settles SETTLE_BARS bars later: a hit for "none".
 * Until then it is pending, so the score never gives away what is still to come.
 */
export function judge(guess: Guess, marks: ChartEvent[], cursor: Cursor): GuessResult {
  const now = cursor.dates[cursor.index];
  const onBar = marks.filter((m) => m.date === guess.date && m.known_on != null);
  if (onBar.length > 0) {
    const first = Math.min(...onBar.map((m) => m.known_on as number));
    if (now < first) return "pending";
    return onBar.some((m) => m.label === guess.label && (m.known_on as number) <= now) ? "hit" : "miss";
  }
  const at = cursor.dates.indexOf(guess.date);
  if (at < 0 || cursor.index - at < SETTLE_BARS) return "pending";
  return guess.label === "none" ? "hit" : "miss";
}

export type Score = { hits: number; misses: number; pending: number };

export function score(guesses: Guess[], marks: ChartEvent[], cursor: Cursor): Score {
  const s: Score = { hits: 0, misses: 0, pending: 0 };
  for (const g of guesses) {
    const r = judge(g, marks, cursor);
    if (r === "hit") s.hits++;
    else if (r === "miss") s.misses++;
    else s.pending++;
  }
  return s;
}

/** Labels the newest bar, replacing an earlier label of the same bar. */
export function putGuess(guesses: Guess[], guess: Guess): Guess[] {
  return [...guesses.filter((g) => g.date !== guess.date), guess];
}

/** A finished (or left) training session, as kept. */
export type TrainingSession = { code: string; from: number; to: number; hits: number; misses: number; at: string };

const KEPT = 50;
const STORAGE_KEY = "wyckoff.replayTraining";

export function loadSessions(storage: Pick<Storage, "getItem"> = localStorage): TrainingSession[] {
  try {
    const v: unknown = JSON.parse(storage.getItem(STORAGE_KEY) ?? "[]");
    return Array.isArray(v) ? (v as TrainingSession[]) : [];
  } catch {
    return [];
  }
}

/** Keeps a session with a settled guess (newest first, the last KEPT). */
export function keepSession(session: TrainingSession, storage: Pick<Storage, "getItem" | "setItem"> = localStorage): TrainingSession[] {
  if (session.hits + session.misses === 0) return loadSessions(storage);
  const all = [session, ...loadSessions(storage)].slice(0, KEPT);
  storage.setItem(STORAGE_KEY, JSON.stringify(all));
  return all;
}
