// Markdown rendered by the backend (pulldown-cmark + ammonia); the webview only inserts
// the sanitised HTML. While streaming, finished blocks are rendered once and cached; only
// the live tail is re-rendered.
import { memo, useEffect, useRef, useState } from "react";
import { splitBlocks } from "./reducer";
import { linkStockCodes, stockLinkClick, useOpenStock } from "./stockLinks";

export type RenderFn = (text: string) => Promise<string>;

const Block = memo(function Block({ source, render, cache }: { source: string; render: RenderFn; cache: Map<string, string> }) {
  const [html, setHtml] = useState<string | null>(cache.get(source) ?? null);
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (html !== null && box.current) linkStockCodes(box.current);
  }, [html]);
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

export default function Markdown({ text, render }: { text: string; render: RenderFn }) {
  const cache = useRef(new Map<string, string>()).current;
  const { blocks, tail } = splitBlocks(text);
  const open = useOpenStock();
  return (
    <div className="markdown" onClick={stockLinkClick(open)}>
      {blocks.map((b, i) => (
        <Block key={i} source={b} render={render} cache={cache} />
      ))}
      {tail.trim() !== "" && <Block key={`tail-${blocks.length}`} source={tail} render={render} cache={cache} />}
    </div>
  );
}
