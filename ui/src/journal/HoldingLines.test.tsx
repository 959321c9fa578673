import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render } from "@testing-library/react";
import type { HoldingValue } from "../bindings";
import { LanguageContext } from "../i18n";
import HoldingLines from "./HoldingLines";

afterEach(cleanup);

const lines: HoldingValue[] = [
  {
    code: "510300",
    instrument: "fund",
    shares: 10000,
    cost_basis_fen: 3400500,
    valuation: { type: "close", close: 3.455, close_date: "2024-08-09", days_behind: 0, exact: true, value_fen: 3455000 },
  },
  {
    code: "127050",
    instrument: "bond",
    shares: 100,
    cost_basis_fen: 1150115,
    valuation: { type: "close", close: 117.1, close_date: "2024-08-07", days_behind: 2, exact: true, value_fen: 1171000 },
  },
  { code: "159915", instrument: "fund", shares: 2000, cost_basis_fen: 360000, valuation: { type: "unvalued", reason: "没有 159915 的收盘价" } },
  { code: "204001", instrument: "repo", shares: 0, cost_basis_fen: 2000000, valuation: { type: "principal", value_fen: 2000000 } },
];

describe("HoldingLines", () => {
  it("says each line's close and its day, a repo's principal and what is not valued", () => {
    const { container } = render(
      <LanguageContext.Provider value="en">
        <HoldingLines lines={lines} asOf="2024-08-09" />
      </LanguageContext.Provider>,
    );
    const li = (code: string) => container.querySelector(`.jr-line[data-code="${code}"]`) as HTMLElement;
    expect(container.querySelector("#jr-lines h4")?.textContent).toBe("Holdings valued on 2024-08-09");
    expect(li("510300").textContent).toContain("close of 2024-08-09");
    expect(li("510300").dataset.value).toBe("3455000");
    expect(li("510300").className).not.toContain("warn");
    // a close older than the valuation day is said, and marked
    expect(li("127050").textContent).toContain("2 days before the valuation day");
    expect(li("127050").className).toContain("warn");
    expect(li("159915").dataset.valuation).toBe("unvalued");
    expect(li("159915").dataset.value).toBeUndefined();
    expect(li("159915").textContent).toContain("not valued: 没有 159915 的收盘价");
    expect(li("204001").textContent).toContain("reverse repo, at its principal");
  });

  it("shows nothing when nothing is held", () => {
    const { container } = render(<HoldingLines lines={[]} asOf="2024-08-09" />);
    expect(container.querySelector("#jr-lines")).toBeNull();
  });
});
