/** The diagnosis's reading on its other timeframes: the daily trigger, the weekly structure
 *  it sits in and, where 60-minute bars are cached, the trigger day's intraday check. The
 *  card carries it untyped (`timeframes`, beside the agent's view of the diagnosis), so it
 *  is read here defensively; each line names its own timeframe (日线/周线/60分钟). */

export type Timeframe = "daily" | "weekly" | "minutes60";

export type TimeframeLine = { timeframe: Timeframe; zh: string; en: string };

const ORDER: Timeframe[] = ["daily", "weekly", "minutes60"];

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** The lines of `diagnosis.timeframes`, daily then weekly then 60-minute; [] when the card
 *  has none (no bars, or a reading saved before timeframes were read). */
export function timeframeLines(diagnosis: unknown): TimeframeLine[] {
  const reading = isObject(diagnosis) ? diagnosis.timeframes : null;
  const lines = isObject(reading) && Array.isArray(reading.lines) ? reading.lines : [];
  return lines
    .filter(
      (l): l is TimeframeLine =>
        isObject(l) && ORDER.includes(l.timeframe as Timeframe) && typeof l.zh === "string" && typeof l.en === "string",
    )
    .sort((a, b) => ORDER.indexOf(a.timeframe) - ORDER.indexOf(b.timeframe));
}
