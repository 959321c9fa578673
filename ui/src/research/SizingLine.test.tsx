import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render } from "@testing-library/react";
import { LanguageContext } from "../i18n";
import SizingLine, { heldBack } from "./SizingLine";
import { requestOf } from "./ResearchPage";

afterEach(cleanup);

const limits = { max_heat_bp: 600, max_industry_bp: 3000, max_positions: 2, drawdown_brake_bp: 1500, max_stop_outs: 3, stop_out_days: 10 };

describe("a research run's sizing", () => {
  it("says the risk per trade and the limits, and where they came from", () => {
    const { container } = render(
      <LanguageContext.Provider value="en">
        <SizingLine id="s" sizing={{ type: "risk", risk_bp: 75, limits, limits_from: "settings" }} />
      </LanguageContext.Provider>,
    );
    const p = container.querySelector("#s");
    expect(p?.getAttribute("data-limits-from")).toBe("settings");
    expect(p?.textContent).toContain("at most 0.75% of equity");
    expect(p?.textContent).toContain("from Settings: heat ≤ 6%, at most 2 positions");
    expect(p?.textContent).toContain("3 losing sales in 10 days");
  });

  it("says nothing for equal slots or a run stored before sizing was recorded", () => {
    const { container } = render(
      <>
        <SizingLine id="a" sizing={{ type: "equal_slots" }} />
        <SizingLine id="b" sizing={undefined} />
      </>,
    );
    expect(container.textContent).toBe("");
  });

  it("lists only the account limits' reasons", () => {
    expect(heldBack({ heat_cap: 2, limit_up: 5, stop_out_brake: 1 })).toBe("heat_cap 2, stop_out_brake 1");
    expect(heldBack(undefined)).toBe("");
  });

  it("sends the sizing and the risk percent the form asks for", () => {
    const base = { start: "", end: "", hold_days: "5,10", stop_loss_pct: "8", take_profit_pct: "", top_n: "", entry_price_mode: "", triggers: "", best_by: "sharpe", mode: "sweep" as const, in_sample: "", out_of_sample: "", step: "" };
    expect(requestOf({ ...base, sizing: "equal", risk_pct: "2" })).toMatchObject({ sizing: null, risk_pct: null });
    expect(requestOf({ ...base, sizing: "risk", risk_pct: "" })).toMatchObject({ sizing: "risk", risk_pct: null });
    expect(requestOf({ ...base, sizing: "risk", risk_pct: "0.5" })).toMatchObject({ sizing: "risk", risk_pct: 0.5 });
  });
});
