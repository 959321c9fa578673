// The market map's pure geometry: a squarified treemap (Bruls, Huizing & van Wijk), the
// colour of a 5-day relative strength, and the rotation chart's scale. No DOM here, so each
// is tested on its own.

export type Rect = { x: number; y: number; w: number; h: number };
export type Cell<T> = Rect & { value: number; data: T };

/** The worst aspect ratio of a row of `areas` laid along a side of length `side`. */
function worst(areas: number[], side: number): number {
  const s = areas.reduce((a, b) => a + b, 0);
  const max = Math.max(...areas);
  const min = Math.min(...areas);
  const s2 = s * s;
  const w2 = side * side;
  return Math.max((w2 * max) / s2, s2 / (w2 * min));
}

/**
 * Lays `items` out in `rect`, each cell's area proportional to its value, the largest first
 * and the cells as near square as the squarified algorithm gets them. Items whose value is
 * not a positive finite number get no cell.
 */
export function squarify<T>(items: { value: number; data: T }[], rect: Rect): Cell<T>[] {
  const sized = items.filter((i) => Number.isFinite(i.value) && i.value > 0).sort((a, b) => b.value - a.value);
  const total = sized.reduce((a, i) => a + i.value, 0);
  if (sized.length === 0 || rect.w <= 0 || rect.h <= 0) return [];
  const scale = (rect.w * rect.h) / total;
  const out: Cell<T>[] = [];
  let free = { ...rect };
  let row: { value: number; data: T; area: number }[] = [];

  const place = () => {
    const sum = row.reduce((a, r) => a + r.area, 0);
    if (free.w >= free.h) {
      // a column along the left side
      const w = sum / free.h;
      let y = free.y;
      for (const r of row) {
        const h = r.area / w;
        out.push({ x: free.x, y, w, h, value: r.value, data: r.data });
        y += h;
      }
      free = { x: free.x + w, y: free.y, w: free.w - w, h: free.h };
    } else {
      // a row along the top
      const h = sum / free.w;
      let x = free.x;
      for (const r of row) {
        const w = r.area / h;
        out.push({ x, y: free.y, w, h, value: r.value, data: r.data });
        x += w;
      }
      free = { x: free.x, y: free.y + h, w: free.w, h: free.h - h };
    }
    row = [];
  };

  for (const item of sized) {
    const next = { ...item, area: item.value * scale };
    const side = Math.min(free.w, free.h);
    if (row.length === 0 || worst([...row.map((r) => r.area), next.area], side) <= worst(row.map((r) => r.area), side)) {
      row.push(next);
    } else {
      place();
      row.push(next);
    }
  }
  if (row.length > 0) place();
  return out;
}

/** The relative strength (percentage points) at which the colour is at its deepest. */
export const FULL_COLOUR_PP = 5;

/**
 * The colour of a 5-day return relative to the market, in percentage points: red above the
 * market and green below it (the A-share convention), deeper the further from it, grey when
 * unknown.
 */
export function strengthColour(relPp: number | null): string {
  if (relPp === null || !Number.isFinite(relPp)) return "rgb(120, 120, 120)";
  const t = Math.max(-1, Math.min(1, relPp / FULL_COLOUR_PP));
  // from a neutral grey-blue towards red (220, 38, 38) or green (22, 163, 74)
  const base = [100, 116, 139];
  const to = t >= 0 ? [220, 38, 38] : [22, 163, 74];
  const k = Math.abs(t);
  const mix = base.map((b, i) => Math.round(b + (to[i] - b) * k));
  return `rgb(${mix[0]}, ${mix[1]}, ${mix[2]})`;
}

/**
 * The rotation chart's half-range around 100 on both axes: wide enough for every point,
 * at least `min`, so 100 stays in the middle and the quadrants keep their places.
 */
export function rotationSpan(points: { rs_ratio: number; rs_momentum: number }[], min = 2): number {
  let span = min;
  for (const p of points) span = Math.max(span, Math.abs(p.rs_ratio - 100), Math.abs(p.rs_momentum - 100));
  // a little margin so a point on the edge is drawn whole
  return span * 1.1;
}

/** Maps a (ratio, momentum) pair onto a `size`-square chart centred on (100, 100). */
export function rotationXY(p: { rs_ratio: number; rs_momentum: number }, span: number, size: number): { x: number; y: number } {
  const half = size / 2;
  return { x: half + ((p.rs_ratio - 100) / span) * half, y: half - ((p.rs_momentum - 100) / span) * half };
}
