// A table row's live price during the session (the watchlist, the holdings).
import type { LiveQuote } from "../bindings";
import { liveCellText } from "./liveQuote";

/** The last price, its change and the quote's time, or a dash for a stock without a quote
 * of today. */
export default function LiveCell({ quote, className }: { quote: LiveQuote | undefined; className: string }) {
  if (!quote) return <td className={className}>—</td>;
  const { text, up } = liveCellText(quote);
  return (
    <td className={`${className} ${up ? "up" : "down"}`} data-live={quote.quote.last_e6}>
      {text}
    </td>
  );
}
