import { describe, expect, it } from "vitest";
import { rotationSpan, rotationXY, squarify, strengthColour, type Cell } from "./treemap";

const area = (c: { w: number; h: number }) => c.w * c.h;
const overlap = (a: Cell<unknown>, b: Cell<unknown>) =>
  Math.max(0, Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x)) * Math.max(0, Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y));

describe("squarify", () => {
  it("gives each item an area in proportion to its value, inside the rectangle, without overlap", () => {
    const values = [6, 6, 4, 3, 2, 2, 1];
    const rect = { x: 10, y: 20, w: 600, h: 400 };
    const cells = squarify(values.map((v, i) => ({ value: v, data: `i${i}` })), rect);
    expect(cells).toHaveLength(values.length);
    const total = values.reduce((a, b) => a + b, 0);
    for (const c of cells) {
      expect(area(c)).toBeCloseTo((c.value / total) * 600 * 400, 6);
      expect(c.x).toBeGreaterThanOrEqual(10 - 1e-9);
      expect(c.y).toBeGreaterThanOrEqual(20 - 1e-9);
      expect(c.x + c.w).toBeLessThanOrEqual(610 + 1e-9);
      expect(c.y + c.h).toBeLessThanOrEqual(420 + 1e-9);
    }
    for (let i = 0; i < cells.length; i++) for (let j = i + 1; j < cells.length; j++) expect(overlap(cells[i], cells[j])).toBeLessThan(1e-6);
    // the whole rectangle is covered
    expect(cells.reduce((a, c) => a + area(c), 0)).toBeCloseTo(600 * 400, 6);
  });

  it("lays the classic example out as the paper does: the first row holds the two sixes", () => {
    // Bruls et al.'s example: 6,6,4,3,2,2,1 in a 6×4 rectangle
    const cells = squarify([6, 6, 4, 3, 2, 2, 1].map((v) => ({ value: v, data: v })), { x: 0, y: 0, w: 6, h: 4 });
    expect(cells[0]).toMatchObject({ x: 0, y: 0, w: 3, h: 2 });
    expect(cells[1]).toMatchObject({ x: 0, y: 2, w: 3, h: 2 });
    // the 4 starts the next column, right of the first
    expect(cells[2].x).toBeCloseTo(3, 9);
    expect(cells[2].y).toBeCloseTo(0, 9);
  });

  it("makes four equal items in a square into four squares", () => {
    const cells = squarify([1, 1, 1, 1].map((v, i) => ({ value: v, data: i })), { x: 0, y: 0, w: 100, h: 100 });
    for (const c of cells) {
      expect(c.w).toBeCloseTo(50, 9);
      expect(c.h).toBeCloseTo(50, 9);
    }
  });

  it("orders by value, largest first, and gives no cell to a zero, negative or unknown value", () => {
    const cells = squarify(
      [
        { value: 1, data: "small" },
        { value: 0, data: "zero" },
        { value: -3, data: "negative" },
        { value: Number.NaN, data: "nan" },
        { value: 5, data: "big" },
      ],
      { x: 0, y: 0, w: 10, h: 10 },
    );
    expect(cells.map((c) => c.data)).toEqual(["big", "small"]);
    expect(squarify([], { x: 0, y: 0, w: 10, h: 10 })).toEqual([]);
    expect(squarify([{ value: 1, data: "x" }], { x: 0, y: 0, w: 0, h: 10 })).toEqual([]);
  });

  it("keeps the cells of many similar items near square", () => {
    const cells = squarify(Array.from({ length: 30 }, (_, i) => ({ value: 10 + (i % 5), data: i })), { x: 0, y: 0, w: 1000, h: 500 });
    const worst = Math.max(...cells.map((c) => Math.max(c.w / c.h, c.h / c.w)));
    expect(worst).toBeLessThan(3);
  });
});

describe("strengthColour", () => {
  it("is red above the market, green below, deeper further away, grey when unknown", () => {
    expect(strengthColour(null)).toBe("rgb(120, 120, 120)");
    expect(strengthColour(0)).toBe("rgb(100, 116, 139)");
    expect(strengthColour(5)).toBe("rgb(220, 38, 38)");
    expect(strengthColour(50)).toBe("rgb(220, 38, 38)");
    expect(strengthColour(-5)).toBe("rgb(22, 163, 74)");
    expect(strengthColour(2.5)).toBe("rgb(160, 77, 89)");
  });
});

describe("rotation scale", () => {
  it("keeps 100 in the middle and every point on the chart", () => {
    const points = [
      { rs_ratio: 103, rs_momentum: 99 },
      { rs_ratio: 98, rs_momentum: 96 },
    ];
    const span = rotationSpan(points);
    expect(span).toBeCloseTo(4.4, 9);
    expect(rotationXY({ rs_ratio: 100, rs_momentum: 100 }, span, 400)).toEqual({ x: 200, y: 200 });
    for (const p of points) {
      const { x, y } = rotationXY(p, span, 400);
      expect(x).toBeGreaterThan(0);
      expect(x).toBeLessThan(400);
      expect(y).toBeGreaterThan(0);
      expect(y).toBeLessThan(400);
    }
    // stronger to the right, gaining upwards
    const a = rotationXY({ rs_ratio: 102, rs_momentum: 102 }, span, 400);
    expect(a.x).toBeGreaterThan(200);
    expect(a.y).toBeLessThan(200);
    expect(rotationSpan([])).toBeCloseTo(2.2, 9);
  });
});
