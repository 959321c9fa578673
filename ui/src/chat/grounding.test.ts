import { describe, expect, it } from "vitest";
import type { Claim, Grounding } from "../bindings";
import { claimsByBlock, groundingStatus, markClaims, planMarks, utf16Offsets } from "./grounding";
import { splitBlocks } from "./reducer";
import { linkStockCodes } from "./stockLinks";

const sourced = (text: string, start: number, call_id = "c1", path = "latest_close"): Claim => ({
  start,
  end: start + Array.from(text).length,
  text,
  kind: "price",
  support: { type: "sourced", source: { type: "tool", call_id, tool: "analyze_stock", path } },
});
const unsupported = (text: string, start: number, kind: Claim["kind"] = "price"): Claim => ({
  start,
  end: start + Array.from(text).length,
  text,
  kind,
  support: { type: "unsupported" },
});

/** Character offset of `needle` in `text` (the backend counts characters). */
const charAt = (text: string, needle: string) => Array.from(text.slice(0, text.indexOf(needle))).length;

describe("utf16Offsets", () => {
  it("maps character offsets to UTF-16 offsets across astral characters", () => {
    // 📈 is two UTF-16 units, one character.
    expect(utf16Offsets("a📈b")).toEqual([0, 1, 3, 4]);
    expect(utf16Offsets("收盘")).toEqual([0, 1, 2]);
  });
});

describe("claimsByBlock", () => {
  it("gives each claim to the block holding its start, counting characters", () => {
    const text = "📈 000001 收盘 10.71 元\n\n目标 36.00 元，另看 601318";
    const { blocks, tail } = splitBlocks(text);
    const claims = [sourced("10.71 元", charAt(text, "10.71")), unsupported("36.00 元", charAt(text, "36.00")), unsupported("601318", charAt(text, "601318"), "code")];
    const by = claimsByBlock(text, [...blocks, tail], claims);
    expect(by.map((b) => b.map((c) => c.claim.text))).toEqual([["10.71 元"], ["36.00 元", "601318"]]);
    expect(by[1].map((c) => c.index)).toEqual([1, 2]);
  });
});

describe("planMarks", () => {
  const bc = (claims: Claim[]) => claims.map((claim, index) => ({ claim, index }));

  it("finds claims in order across text nodes, whole figures only", () => {
    const texts = ["收盘 112.35 后回到 12.35 元", "，涨 5.2%"];
    const marks = planMarks(texts, bc([sourced("12.35 元", 0), unsupported("5.2%", 0, "percent")]));
    expect(marks.map((m) => [m.node, texts[m.node].slice(m.start, m.end)])).toEqual([
      [0, "12.35 元"],
      [1, "5.2%"],
    ]);
  });

  it("falls back to the leading number when markup split the figure", () => {
    // "**12.35** 元" renders as <strong>12.35</strong> and " 元".
    const texts = ["收盘 ", "12.35", " 元"];
    const marks = planMarks(texts, bc([sourced("12.35 元", 0)]));
    expect(marks.map((m) => [m.node, m.start, m.end])).toEqual([[1, 0, 5]]);
  });

  it("leaves out a claim it cannot find rather than guess", () => {
    expect(planMarks(["没有这个数"], bc([unsupported("9.99 元", 0)]))).toEqual([]);
  });

  it("does not reuse a spot: the same figure twice marks both places", () => {
    const texts = ["10.5 与 10.5"];
    const marks = planMarks(texts, bc([sourced("10.5", 0), unsupported("10.5", 0)]));
    expect(marks.map((m) => m.start)).toEqual([0, 7]);
  });
});

describe("markClaims", () => {
  it("underlines unsupported figures with the title, links sourced ones, keeps stock links working", () => {
    const root = document.createElement("div");
    // what the backend's sanitised HTML for the answer looks like
    root.innerHTML = "<p>000001 收盘 <strong>10.71</strong> 元，目标 36.00 元，另看 601318</p><pre>36.00</pre>";
    const claims = [sourced("10.71 元", 0, "call_9", "latest_close"), unsupported("36.00 元", 0), unsupported("601318", 0, "code")];
    const bcs = claims.map((claim, index) => ({ claim, index }));
    markClaims(root, bcs, "en");
    markClaims(root, bcs, "en");
    linkStockCodes(root);
    const marks = Array.from(root.querySelectorAll<HTMLElement>(".claim"));
    expect(marks.map((m) => [m.textContent, m.className, m.title])).toEqual([
      ["10.71", "claim claim-sourced", "from analyze_stock · latest_close — click to show the tool card"],
      ["36.00 元", "claim claim-unsupported", "no source in this turn's data"],
      ["601318", "claim claim-unsupported", "no source in this turn's data"],
    ]);
    expect(marks[0].dataset.callId).toBe("call_9");
    // the text is unchanged, the code block untouched, the invented code still a stock link
    expect(root.querySelector("p")?.textContent).toBe("000001 收盘 10.71 元，目标 36.00 元，另看 601318");
    expect(root.querySelector("pre")?.innerHTML).toBe("36.00");
    expect(marks[2].querySelector(".stock-link")?.getAttribute("data-code")).toBe("601318");

    const zh = document.createElement("div");
    zh.innerHTML = "<p>目标 36.00 元</p>";
    markClaims(zh, [{ claim: unsupported("36.00 元", 0), index: 0 }], "zh");
    expect(zh.querySelector(".claim")?.getAttribute("title")).toBe("本轮数据中没有来源");
  });

  it("never turns text into markup", () => {
    const root = document.createElement("div");
    root.innerHTML = "<p>&lt;img src=x onerror=alert(1)&gt; 36.00 元</p>";
    markClaims(root, [{ claim: unsupported("36.00 元", 0), index: 0 }], "en");
    expect(root.querySelector("img")).toBeNull();
    expect(root.querySelector("p")?.textContent).toBe("<img src=x onerror=alert(1)> 36.00 元");
  });
});

describe("groundingStatus", () => {
  const g = (sourcedN: number, derived: number, unsupportedN: number, corrected = false): Grounding => ({
    sourced: sourcedN,
    derived,
    unsupported: unsupportedN,
    invented_codes: 0,
    corrected,
    claims: [],
  });
  it.each([
    [g(14, 0, 1), "en", "numbers: 14 sourced, 1 unsupported"],
    [g(14, 2, 0), "en", "numbers: 14 sourced, 2 derived, 0 unsupported"],
    [g(3, 0, 1, true), "en", "numbers: 3 sourced, 1 unsupported (after one correction)"],
    [g(14, 0, 1), "zh", "数字核对：14 处有来源，1 处无来源"],
    [g(2, 1, 0, true), "zh", "数字核对：2 处有来源，1 处由来源计算，0 处无来源（已更正一次）"],
  ] as const)("%o in %s", (grounding, lang, want) => {
    expect(groundingStatus(grounding, lang)).toBe(want);
  });
});
