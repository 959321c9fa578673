// Stock codes in chat answers, diagnosis cards and tables open the stock page. The answer's
// HTML comes sanitised from the backend; links are added afterwards with DOM calls on its
// text nodes (never by building HTML), so nothing here can turn text into markup.
import { createContext, useContext } from "react";

/** Opens the stock page of a code; `null` where no page can be opened (tests, previews). */
export const OpenStockContext = createContext<((code: string) => void) | null>(null);

export function useOpenStock() {
  return useContext(OpenStockContext);
}

// The backend's rule for codes in free text (wyckoff_engine::codes), kept identical by the
// shared cases in fixtures/stock_codes.json that both test suites read. A mention is a run of
// exactly six digits (ASCII or full-width) with a stock's board prefix — SH main
// 600/601/603/605/900, SZ main 000–004/200/201, ChiNext 300/301, STAR 688/689, BSE
// 4xx/8xx/920 — that is not part of a decimal number (a "." with a digit on its other side)
// and not a JSON number value ('":600000,'). Amounts, dates and ETFs stay plain text.
const STOCK = /^(?:60[0135]|900|00[0-4]|20[01]|30[01]|68[89]|920|[48]\d\d)\d{3}$/;

/** The ASCII digit of an ASCII or full-width digit, else null. */
function digitOf(ch: string | undefined): string | null {
  if (ch === undefined) return null;
  const c = ch.charCodeAt(0);
  if (c >= 0x30 && c <= 0x39) return ch;
  if (c >= 0xff10 && c <= 0xff19) return String.fromCharCode(c - 0xfee0);
  return null;
}

/** The stock codes in `text`, in order, each with its offset and length in `text`. */
export function findStockCodes(text: string): { code: string; index: number; length: number }[] {
  const out: { code: string; index: number; length: number }[] = [];
  const isDigit = (ch: string | undefined) => digitOf(ch) !== null;
  let i = 0;
  while (i < text.length) {
    const start = i;
    let run = "";
    for (let d = digitOf(text[i]); d !== null; d = digitOf(text[i])) {
      run += d;
      i += 1;
    }
    if (run === "") {
      i += 1;
      continue;
    }
    const [before, before2, after, after2] = [text[start - 1], text[start - 2], text[i], text[i + 1]];
    const decimal = (before === "." && isDigit(before2)) || (after === "." && isDigit(after2));
    const jsonNumber = before === ":" && before2 === '"' && (after === "," || after === "}" || after === "]");
    if (!decimal && !jsonNumber && STOCK.test(run)) out.push({ code: run, index: start, length: i - start });
  }
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
    for (const { code, index, length } of hits) {
      frag.append(text.slice(at, index));
      const link = doc.createElement("button");
      link.type = "button";
      link.className = "link stock-link";
      link.dataset.code = code;
      // as written (full-width digits stay full-width); the code opened is ASCII
      link.textContent = text.slice(index, index + length);
      frag.append(link);
      at = index + length;
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
