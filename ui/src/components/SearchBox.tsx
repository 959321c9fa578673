// The search box on every page: code, name or pinyin initials (the engine's search) → the
// stock page.
import { useEffect, useState } from "react";
import { commands, type StockHit } from "../bindings";
import { useMarketText } from "../pages/marketText";
import "./market.css";

export const SEARCH_DEBOUNCE_MS = 200;

export default function SearchBox({ onOpen }: { onOpen: (code: string) => void }) {
  const t = useMarketText();
  const [q, setQ] = useState("");
  const [hits, setHits] = useState<StockHit[]>([]);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const query = q.trim();
    if (query === "") {
      setHits([]);
      return;
    }
    let live = true;
    const timer = setTimeout(async () => {
      try {
        const r = await commands.searchStocks(query);
        if (!live) return;
        if (r.status === "ok") {
          setHits(r.data);
          setError(null);
        } else setError(r.error.message);
      } catch (e) {
        if (live) setError(e instanceof Error ? e.message : String(e));
      }
    }, SEARCH_DEBOUNCE_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [q]);

  const open = (code: string) => {
    setQ("");
    setHits([]);
    onOpen(code);
  };

  return (
    <div className="stock-search" role="search">
      <input
        id="stock-search"
        type="search"
        value={q}
        placeholder={t("searchPlaceholder")}
        aria-label={t("searchPlaceholder")}
        onChange={(e) => setQ(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && hits.length > 0) open(hits[0].code);
          if (e.key === "Escape") setQ("");
        }}
      />
      {error && <p className="error">{error}</p>}
      {hits.length > 0 && (
        <ul className="search-hits" id="search-hits">
          {hits.map((h) => (
            <li key={h.code}>
              <button className="search-hit" data-code={h.code} onClick={() => open(h.code)}>
                {h.code} {h.name}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
