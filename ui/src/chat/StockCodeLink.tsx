// A stock code that opens the stock page, and a small daily chart a diagnosis card can
// show inline (the same `stock_chart` data and chart as the stock page).
import { lazy, Suspense, useEffect, useState } from "react";
import { commands, type StockChart as ChartData } from "../bindings";
import { marketErrorText } from "../pages/marketError";
import { useOpenStock } from "./stockLinks";

// The chart library loads with the first chart drawn (or the start-up warm-up), not with the chat.
const StockChart = lazy(() => import("../components/StockChart"));

export function StockCodeLink({ code }: { code: string }) {
  const open = useOpenStock();
  if (!open) return <code>{code}</code>;
  return (
    <button type="button" className="link stock-link" data-code={code} onClick={() => open(code)}>
      {code}
    </button>
  );
}

export function InlineChart({ code }: { code: string }) {
  const [chart, setChart] = useState<ChartData | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    commands
      .stockChart(code, "day", null)
      .then((r) => {
        if (!live) return;
        if (r.status === "ok") setChart(r.data);
        else setError(marketErrorText(r.error));
      })
      .catch((e: unknown) => live && setError(String(e)));
    return () => {
      live = false;
    };
  }, [code]);
  if (error) return <p className="error inline-chart-error">{error}</p>;
  if (!chart) return <p className="muted">…</p>;
  return (
    <div className="inline-chart" data-code={code}>
      <Suspense fallback={<p className="muted">…</p>}>
        <StockChart chart={chart} height={220} />
      </Suspense>
    </div>
  );
}
