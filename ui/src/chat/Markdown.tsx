// Markdown rendered by the backend (pulldown-cmark + ammonia); the webview only inserts
// the sanitised HTML. While streaming, finished blocks are rendered once and cached; only
// the live tail is re-rendered.
import { type MouseEvent, memo, useContext, useEffect, useMemo, useRef, useState } from "react";
import type { Grounding } from "../bindings";
import { LanguageContext } from "../i18n";
import { type BlockClaim, claimClick, claimsByBlock, markClaims } from "./grounding";
import { splitBlocks } from "./reducer";
import { linkStockCodes, stockLinkClick, useOpenStock } from "./stockLinks";

export type RenderFn = (text: string) => Promise<string>;

const NO_CLAIMS: BlockClaim[] = [];

const Block = memo(function Block({ source, render, cache, claims = NO_CLAIMS }: { source: string; render: RenderFn; cache: Map<string, string>; claims?: BlockClaim[] }) {
  const [html, setHtml] = useState<string | null>(cache.get(source) ?? null);
  const box = useRef<HTMLDivElement>(null);
  const lang = useContext(LanguageContext);
  useEffect(() => {
    if (html !== null && box.current) {
      // Figures first: a code inside a marked figure still becomes a stock link.
      markClaims(box.current, claims, lang);
      linkStockCodes(box.current);
    }
  }, [html, claims, lang]);
  useEffect(() => {
    if (cache.has(source)) {
      setHtml(cache.get(source) ?? null);
      return;
    }
    let live = true;
    void render(source).then((h) => {
      cache.set(source, h);
      if (live) setHtml(h);
    });
    return () => {
      live = false;
    };
  }, [source, render, cache]);
  // Until the sanitised HTML arrives the source is shown as plain text (never as HTML).
  return html === null ? <div className="md-pending">{source}</div> : <div ref={box} className="md-block" dangerouslySetInnerHTML={{ __html: html }} />;
});

/** `grounding`, on a final answer, marks its figures (see ./grounding.ts). */
export default function Markdown({ text, render, grounding }: { text: string; render: RenderFn; grounding?: Grounding | null }) {
  const cache = useRef(new Map<string, string>()).current;
  const { blocks, tail } = splitBlocks(text);
  const open = useOpenStock();
  const claims = useMemo(
    () => (grounding && grounding.claims.length > 0 ? claimsByBlock(text, [...blocks, tail], grounding.claims) : null),
    [text, grounding],
  );
  const onClick = (e: MouseEvent) => {
    stockLinkClick(open)(e);
    claimClick(e);
  };
  return (
    <div className="markdown" onClick={onClick}>
      {blocks.map((b, i) => (
        <Block key={i} source={b} render={render} cache={cache} claims={claims?.[i]} />
      ))}
      {tail.trim() !== "" && <Block key={`tail-${blocks.length}`} source={tail} render={render} cache={cache} claims={claims?.[blocks.length]} />}
    </div>
  );
}
