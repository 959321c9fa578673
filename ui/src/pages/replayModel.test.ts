import { describe, expect, it } from "vitest";
import type { ChartEvent } from "../bindings";
import { SETTLE_BARS, atEnd, judge, keepSession, loadSessions, parseIsoDate, putGuess, score, startAt, stepBar, stepWeek, type Cursor } from "./replayModel";

// Trading days: Mon 2024-03-04 … with a holiday gap.
const dates = [20240304, 20240305, 20240306, 20240307, 20240308, 20240311, 20240312, 20240318, 20240319];

const mark = (label: string, date: number, known_on: number): ChartEvent => ({
  label,
  date,
  bar_date: date,
  price: 10,
  why: "",
  why_zh: "",
  known_on,
  ended: null,
});

describe("the replay cursor", () => {
  it("starts on the last bar on or before the chosen day, never on the last bar", () => {
    expect(startAt(dates, 20240309)?.index).toBe(4);
    expect(startAt(dates, 20240304)?.index).toBe(0);
    expect(startAt(dates, 20240301)).toBeNull();
    expect(startAt(dates, 20240319)).toBeNull();
    expect(startAt(dates, 20250101)).toBeNull();
  });

  it("steps a bar, a week (seven calendar days, across gaps), and stops at the end", () => {
    const c: Cursor = { dates, index: 0 };
    expect(stepBar(c).index).toBe(1);
    expect(stepWeek(c).index).toBe(5); // 03-04 → 03-11
    expect(stepWeek({ dates, index: 5 }).index).toBe(7); // 03-11 → 03-18
    expect(stepWeek({ dates, index: 7 }).index).toBe(8);
    const end = { dates, index: 8 };
    expect(atEnd(end)).toBe(true);
    expect(stepBar(end)).toBe(end);
  });

  it("reads a typed start date, refusing what is not a day", () => {
    expect(parseIsoDate(" 2024-03-15 ")).toBe(20240315);
    expect(parseIsoDate("2024-02-30")).toBeNull();
    expect(parseIsoDate("20240315")).toBeNull();
  });
});

describe("the training score", () => {
  const long = Array.from({ length: 40 }, (_, i) => 20240101 + i); // plain numbers suffice here
  const at = (index: number): Cursor => ({ dates: long, index });

  it("settles a guess when the engine's mark on that bar becomes known, not before", () => {
    const marks = [mark("SC", long[2], long[5]), mark("AR", long[10], long[35])];
    expect(judge({ date: long[2], label: "SC" }, marks, at(4))).toBe("pending");
    expect(judge({ date: long[2], label: "SC" }, marks, at(5))).toBe("hit");
    expect(judge({ date: long[2], label: "Spring" }, marks, at(5))).toBe("miss");
    expect(judge({ date: long[2], label: "none" }, marks, at(5))).toBe("miss");
    // A mark known 25 bars later keeps "none" pending past the settling window.
    expect(judge({ date: long[10], label: "none" }, marks, at(10 + SETTLE_BARS))).toBe("pending");
    expect(judge({ date: long[10], label: "none" }, marks, at(35))).toBe("miss");
  });

  it("settles an unmarked bar exactly SETTLE_BARS bars later", () => {
    expect(judge({ date: long[3], label: "none" }, [], at(3 + SETTLE_BARS - 1))).toBe("pending");
    expect(judge({ date: long[3], label: "none" }, [], at(3 + SETTLE_BARS))).toBe("hit");
    expect(judge({ date: long[3], label: "ST" }, [], at(3 + SETTLE_BARS))).toBe("miss");
  });

  it("counts hits, misses and pending; a bar's new label replaces the old", () => {
    const marks = [mark("SC", long[2], long[5])];
    let g = putGuess([], { date: long[2], label: "ST" });
    g = putGuess(g, { date: long[2], label: "SC" });
    g = putGuess(g, { date: long[6], label: "none" });
    expect(g).toHaveLength(2);
    expect(score(g, marks, at(6))).toEqual({ hits: 1, misses: 0, pending: 1 });
  });

  it("keeps sessions with a settled guess, newest first", () => {
    const store = new Map<string, string>();
    const storage = { getItem: (k: string) => store.get(k) ?? null, setItem: (k: string, v: string) => void store.set(k, v) };
    const s = { code: "000001", from: 20240102, to: 20240301, hits: 3, misses: 1, at: "2026-12-05T08:00:00Z" };
    expect(keepSession({ ...s, hits: 0, misses: 0 }, storage)).toEqual([]);
    keepSession(s, storage);
    expect(keepSession({ ...s, hits: 5 }, storage).map((x) => x.hits)).toEqual([5, 3]);
    expect(loadSessions(storage)).toHaveLength(2);
    store.set("wyckoff.replayTraining", "not json");
    expect(loadSessions(storage)).toEqual([]);
  });
});
