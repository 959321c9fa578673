// Opens the stock page at a bar (replayed to that close, as the alert centre does): the
// way a figure anywhere — a tracked return, a backtest trade, a screen row — leads to the
// bar it came from. `null` where no page can be opened (tests, previews).
import { createContext, useContext } from "react";

export const OpenStockAtContext = createContext<((code: string, at: number | null) => void) | null>(null);

export function useOpenStockAt() {
  return useContext(OpenStockAtContext);
}

/** YYYYMMDD from "YYYY-MM-DD", "YYYYMMDD" or a number; `null` for anything else. */
export function barDate(v: unknown): number | null {
  const s = typeof v === "number" ? String(v) : typeof v === "string" ? v.trim().replaceAll("-", "") : "";
  return /^\d{8}$/.test(s) ? Number(s) : null;
}
