import { describe, expect, it } from "vitest";
import { isNearBottom } from "./stickToBottom";

describe("isNearBottom", () => {
  it.each([
    // scrollTop, clientHeight, scrollHeight, expected
    [0, 500, 500, true], // nothing to scroll
    [500, 500, 1000, true], // at the end
    [430, 500, 1000, true], // 70 px above the end
    [419, 500, 1000, false], // 81 px above the end: the user is reading
    [0, 500, 2000, false],
  ])("top %i, view %i, content %i → %s", (top, view, content, want) => {
    expect(isNearBottom(top, view, content)).toBe(want);
  });
});
