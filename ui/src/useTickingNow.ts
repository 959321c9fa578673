import { useEffect, useState } from "react";

/** The current time, ticking each second while `ticking` (a running sub-agent's clock,
 * the task panel's elapsed times). */
export function useTickingNow(ticking: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!ticking) return;
    setNow(Date.now());
    const h = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(h);
  }, [ticking]);
  return now;
}
