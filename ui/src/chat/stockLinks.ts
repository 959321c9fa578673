// Stock codes in chat answers, diagnosis cards and tables open the stock page. The answer's
// HTML comes sanitised from the backend; links are added afterwards with DOM calls on its
// text nodes (never by building HTML), so nothing here can turn text into markup.
import { createContext, useContext } from "react";

/** Opens the stock page of a code; `null` where no page can be opened (tests, previews). */
export const OpenStockContext = createContext<((code: string) => void) | null>(null);

export function useOpenStock() {
  return useContext(OpenStockContext);
}

// A-share codes by their board prefix: SZ main 000–003, ChiNext 300/301, SH main
// 600/601/603/605, STAR 688/689, BSE 43/83/87/88/920. Other six-digit numbers (amounts,
// dates like 202406) stay plain text.
const CODE = /(^|[^\d.])((?:00[0-3]|30[01]|60[0135]|68[89]|4[3]\d|8[378]\d|920)\d{3})(?![\d.]?\d)/g;

/** The stock codes in `text`, in order, each with its offset. */
export function findStockCodes(text: string): { code: string; index: number }[] {
  const out: { code: string; index: number }[] = [];
  for (const m of text.matchAll(CODE)) out.push({ code: m[2], index: (m.index ?? 0) + m[1].length });
  return out;
}

const SKIP = new Set(["A", "BUTTON", "PRE", "SCRIPT", "STYLE", "TEXTAREA"]);

/** Wraps every stock code in `root`'s text in a `.stock-link` button (idempotent). */
export function linkStockCodes(root: HTMLElement): void {
  const doc = root.ownerDocument;
  const walker = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode(node) {
      for (let el = node.parentElement; el && el !== root; el = el.parentElement) {
        if (SKIP.has(el.tagName) || el.classList.contains("stock-link")) return NodeFilter.FILTER_REJECT;
      }
      return NodeFilter.FILTER_ACCEPT;
    },
  });
  const texts: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) texts.push(n as Text);
  for (const node of texts) {
    const text = node.data;
    const hits = findStockCodes(text);
    if (hits.length === 0) continue;
    const frag = doc.createDocumentFragment();
    let at = 0;
    for (const { code, index } of hits) {
      frag.append(text.slice(at, index));
      const link = doc.createElement("button");
      link.type = "button";
      link.className = "link stock-link";
      link.dataset.code = code;
      link.textContent = code;
      frag.append(link);
      at = index + code.length;
    }
    frag.append(text.slice(at));
    node.replaceWith(frag);
  }
}

/** Click delegation for a container holding `.stock-link`s. */
export function stockLinkClick(open: ((code: string) => void) | null) {
  return (e: { target: EventTarget | null }) => {
    const el = e.target instanceof Element ? e.target.closest<HTMLElement>(".stock-link") : null;
    const code = el?.dataset.code;
    if (open && code) open(code);
  };
}
