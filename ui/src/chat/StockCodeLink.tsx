// A stock code that opens the stock page, and a small daily chart a diagnosis card can
// show inline (the same `stock_chart` data and chart as the stock page).
import { useEffect, useState } from "react";
import { commands, type StockChart as ChartData } from "../bindings";
import StockChart from "../components/StockChart";
import { marketErrorText } from "../pages/Stock";
import { useOpenStock } from "./stockLinks";

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
      <StockChart chart={chart} height={220} />
    </div>
  );
}
