// How a sweep or walk-forward sized its buys: by risk, under which account limits and
// where they came from (nothing for equal slots).
import { useContext } from "react";
import type { PositionSizing } from "../bindings";
import { LanguageContext } from "../i18n";
import { researchText } from "./text";

/** The account limits' reasons for not buying a pick, as `heat_cap 3, stop_out_brake 1`. */
export function heldBack(skipped: Partial<Record<string, number>> | undefined): string {
  return ["heat_cap", "positions_limit", "drawdown_brake", "stop_out_brake"]
    .filter((k) => (skipped?.[k] ?? 0) > 0)
    .map((k) => `${k} ${skipped?.[k]}`)
    .join(", ");
}

export default function SizingLine({ sizing, id }: { sizing: PositionSizing | undefined; id: string }) {
  const t = researchText(useContext(LanguageContext));
  // Runs stored before sizing was recorded sized by equal slots.
  if (sizing?.type !== "risk") return null;
  const l = sizing.limits;
  return (
    <p className="hint" id={id} data-limits-from={sizing.limits_from}>
      {t("sizingLine", {
        risk: sizing.risk_bp / 100,
        from: t(sizing.limits_from === "settings" ? "fromSettings" : "fromDefaults"),
        heat: l.max_heat_bp / 100,
        positions: l.max_positions,
        dd: l.drawdown_brake_bp / 100,
        days: l.stop_out_days,
        stops: l.max_stop_outs,
      })}
    </p>
  );
}
