import { describe, expect, it } from "vitest";
import type { Annotation } from "../bindings";
import { AGENT_COLOR, USER_COLOR, barOnOrAfter, barOnOrBefore, formAt, formShape, noteText, place } from "./chartNotes";

const note = (shape: Annotation["shape"], author: Annotation["author"] = { type: "user" }): Annotation => ({
  id: 1,
  code: "000001",
  period: "day",
  shape,
  author,
  created_at: "2020-06-17T01:02:03Z",
});

describe("chart notes", () => {
  const dates = [20200102, 20200103, 20200106, 20200107];
  const highs = [10, 11, null, 12];

  it("snaps dates between bars inward", () => {
    expect(barOnOrAfter(dates, 20200104)).toBe(20200106);
    expect(barOnOrBefore(dates, 20200105)).toBe(20200103);
    expect(barOnOrAfter(dates, 20300101)).toBe(20200107);
    expect(barOnOrBefore(dates, 20100101)).toBe(20200102);
    expect(barOnOrAfter([], 20200101)).toBeNull();
  });

  it("places each kind on the bars in its author's colour", () => {
    const placed = place(
      [
        note({ kind: "box", from: 20200104, to: 20200105, low: 9, high: 12 }),
        note({ kind: "box", from: 20200101, to: 20200105, low: 9, high: 12 }, { type: "agent", conversation: "c" }),
        note({ kind: "line", price: 10.5, from: null, to: null }),
        note({ kind: "text", date: 20200103, text: "Spring?" }),
        note({ kind: "text", date: 20200106, text: "no high" }),
      ],
      dates,
      highs,
      "en",
    );
    // a box between two bars holds no bar and is left out
    expect(placed.map((p) => p.kind)).toEqual(["box", "line", "text"]);
    expect(placed[0]).toMatchObject({ from: "2020-01-02", to: "2020-01-03", color: AGENT_COLOR });
    expect(placed[1]).toMatchObject({ from: null, to: null, price: 10.5, color: USER_COLOR });
    expect(placed[2]).toMatchObject({ date: "2020-01-03", price: 11, text: "Spring?" });
  });

  it("says what, who and when", () => {
    const text = noteText(note({ kind: "line", price: 10.5, from: 20200102, to: null }, { type: "agent", conversation: "abcdef123456" }), "en");
    expect(text).toMatch(/^Support\/resistance 10\.5 · 2020-01-02 → … — Agent \(conversation abcdef12\) · 2020-06-1\d \d\d:\d\d$/);
    expect(noteText(note({ kind: "text", date: 20200103, text: "x" }), "zh")).toMatch(/^文字 2020-01-03: x — 我 · /);
  });

  it("reads the form into a shape, naming a bad field", () => {
    const f = formAt("box", 20200103, 10.456);
    expect(f).toMatchObject({ from: "2020-01-03", to: "2020-01-03", low: "10.46", high: "10.46" });
    expect(formShape({ ...f, high: "11" }, "en")).toEqual({ kind: "box", from: 20200103, to: 20200103, low: 10.46, high: 11 });
    expect(() => formShape({ ...f, to: "soon" }, "en")).toThrow("To is not a date (YYYY-MM-DD)");
    expect(() => formShape({ ...f, low: "" }, "zh")).toThrow("下沿 不是有效的数字");
    expect(formShape({ ...formAt("line", null, null), price: "9" }, "en")).toEqual({ kind: "line", price: 9, from: null, to: null });
  });
});
