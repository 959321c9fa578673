// Where an answer's numbers came from (the backend's grounding check), marked in the
// rendered answer. The answer's HTML comes sanitised from the backend; marks are added
// afterwards with DOM calls on its text nodes (never by building HTML), so nothing here
// can turn text into markup.
import type { Claim, Grounding, Language } from "../bindings";

/** A claim placed in one markdown block's source: UTF-16 offsets within the block. */
export interface BlockClaim {
  claim: Claim;
  index: number;
}

/** What the status line and the marks say, in the page's language. */
export function groundingWords(lang: Language) {
  return lang === "en"
    ? {
        unsupported: "no source in this turn's data",
        sourcedFrom: (tool: string, path: string) => `from ${tool}${path ? ` · ${path}` : ""} — click to show the tool card`,
        fromUser: "from your message",
        fromNotice: "from a task notice",
        derived: "computed from two sourced numbers",
      }
    : {
        unsupported: "本轮数据中没有来源",
        sourcedFrom: (tool: string, path: string) => `来自 ${tool}${path ? ` · ${path}` : ""}（点击查看工具卡片）`,
        fromUser: "来自你的消息",
        fromNotice: "来自任务通知",
        derived: "由两个有来源的数字计算得出",
      };
}

/** `numbers: 14 sourced, 1 unsupported` (derived only when there are some). */
export function groundingStatus(g: Grounding, lang: Language): string {
  if (lang === "en") {
    const parts = [`${g.sourced} sourced`];
    if (g.derived > 0) parts.push(`${g.derived} derived`);
    parts.push(`${g.unsupported} unsupported`);
    return `numbers: ${parts.join(", ")}${g.corrected ? " (after one correction)" : ""}`;
  }
  const parts = [`${g.sourced} 处有来源`];
  if (g.derived > 0) parts.push(`${g.derived} 处由来源计算`);
  parts.push(`${g.unsupported} 处无来源`);
  return `数字核对：${parts.join("，")}${g.corrected ? "（已更正一次）" : ""}`;
}

/**
 * The UTF-16 offset of each character offset in `text` (the backend counts characters;
 * JavaScript strings count UTF-16 units). Entry `i` is where character `i` starts.
 */
export function utf16Offsets(text: string): number[] {
  const out: number[] = [];
  let at = 0;
  for (const ch of text) {
    out.push(at);
    at += ch.length;
  }
  out.push(at);
  return out;
}

/**
 * Splits the answer's claims among its markdown blocks: each block is found in the
 * answer in order, and a claim goes to the block holding its start.
 */
export function claimsByBlock(text: string, blocks: string[], claims: Claim[]): BlockClaim[][] {
  const offsets = utf16Offsets(text);
  const out: BlockClaim[][] = blocks.map(() => []);
  let from = 0;
  const starts = blocks.map((b) => {
    const at = text.indexOf(b, from);
    if (at >= 0) from = at + b.length;
    return at;
  });
  claims.forEach((claim, index) => {
    const start = offsets[Math.min(claim.start, offsets.length - 1)];
    const b = starts.findIndex((s, i) => s >= 0 && start >= s && start < s + blocks[i].length);
    if (b >= 0) out[b].push({ claim, index });
  });
  return out;
}

/** One mark to add: characters `start..end` of text node `node`. */
export interface Mark {
  node: number;
  start: number;
  end: number;
  claim: Claim;
  index: number;
}

/** The leading number of a claim's text (`12.35 元` → `12.35`), for a figure markdown split. */
function core(text: string): string {
  const m = /^[0-9０-９][0-9０-９.,]*/.exec(text);
  return m ? m[0] : text;
}

/**
 * Where each claim lies in the rendered text nodes: claims are found in order, each after
 * the one before, as written or by its leading number when markup split it (`**12.35** 元`).
 * A figure with no digit before or after it matches only whole (`12.3` is not in `112.35`).
 * Claims not found are left out, never guessed at.
 */
export function planMarks(texts: string[], claims: BlockClaim[]): Mark[] {
  const marks: Mark[] = [];
  let node = 0;
  let at = 0;
  const isDigit = (c: string | undefined) => c !== undefined && /[0-9０-９.]/.test(c);
  const findIn = (n: number, from: number, needle: string): number => {
    let i = texts[n].indexOf(needle, from);
    while (i >= 0) {
      const before = texts[n][i - 1];
      const after = texts[n][i + needle.length];
      if (!isDigit(before) && !(isDigit(after) && /[0-9０-９]$/.test(needle))) return i;
      i = texts[n].indexOf(needle, i + 1);
    }
    return -1;
  };
  for (const bc of claims) {
    let found: { n: number; i: number; len: number } | null = null;
    for (const needle of [bc.claim.text, core(bc.claim.text)]) {
      for (let n = node; n < texts.length && !found; n += 1) {
        const i = findIn(n, n === node ? at : 0, needle);
        if (i >= 0) found = { n, i, len: needle.length };
      }
      if (found) break;
    }
    if (!found) continue;
    marks.push({ node: found.n, start: found.i, end: found.i + found.len, claim: bc.claim, index: bc.index });
    node = found.n;
    at = found.i + found.len;
  }
  return marks;
}

const SKIP = new Set(["A", "BUTTON", "PRE", "SCRIPT", "STYLE", "TEXTAREA", "CODE"]);

/** The title a mark shows on hover. */
function titleOf(claim: Claim, lang: Language): string {
  const w = groundingWords(lang);
  const s = claim.support;
  if (s.type === "unsupported") return w.unsupported;
  if (s.type === "derived") return w.derived;
  const src = s.source;
  if (src.type === "tool") return w.sourcedFrom(src.tool, src.path);
  return src.type === "user" ? w.fromUser : w.fromNotice;
}

/** Wraps each found claim of `root`'s text in a `.claim` span (idempotent). */
export function markClaims(root: HTMLElement, claims: BlockClaim[], lang: Language): void {
  if (claims.length === 0 || root.querySelector(".claim")) return;
  const doc = root.ownerDocument;
  const walker = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode(node) {
      for (let el = node.parentElement; el && el !== root; el = el.parentElement) {
        if (SKIP.has(el.tagName)) return NodeFilter.FILTER_REJECT;
      }
      return NodeFilter.FILTER_ACCEPT;
    },
  });
  const nodes: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) nodes.push(n as Text);
  const marks = planMarks(
    nodes.map((n) => n.data),
    claims,
  );
  // Back to front, so earlier offsets in the same node stay valid.
  for (const m of [...marks].reverse()) {
    const node = nodes[m.node];
    const tail = node.splitText(m.start);
    tail.splitText(m.end - m.start);
    const span = doc.createElement("span");
    const kind = m.claim.support.type;
    span.className = `claim claim-${kind}`;
    span.dataset.claim = String(m.index);
    span.dataset.kind = m.claim.kind;
    span.title = titleOf(m.claim, lang);
    if (m.claim.support.type === "sourced" && m.claim.support.source.type === "tool") {
      span.dataset.callId = m.claim.support.source.call_id;
      span.dataset.path = m.claim.support.source.path;
      span.setAttribute("role", "link");
      span.tabIndex = 0;
    }
    tail.replaceWith(span);
    span.append(tail);
  }
}

/** Click delegation: a sourced figure scrolls to its tool card and highlights it. */
export function claimClick(e: { target: EventTarget | null }): void {
  const el = e.target instanceof Element ? e.target.closest<HTMLElement>(".claim[data-call-id]") : null;
  const id = el?.dataset.callId;
  if (!id) return;
  const card = Array.from(el.ownerDocument.querySelectorAll<HTMLElement>(".tool-card[data-call-id]")).find((c) => c.dataset.callId === id);
  if (!card) return;
  card.scrollIntoView?.({ block: "center" });
  card.classList.add("claim-target");
  setTimeout(() => card.classList.remove("claim-target"), 1600);
}
