import { beforeEach, describe, expect, it, vi } from "vitest";
import { act, cleanup, fireEvent, render } from "@testing-library/react";
import type { PositionRow } from "../bindings";

const mocks = vi.hoisted(() => ({ portfolioSetLevels: vi.fn() }));
vi.mock("../bindings", () => ({ commands: mocks }));

import PositionLevels, { parseLevels } from "./PositionLevels";

const row = { code: "002572", name: "索菲亚", shares: 100, cost: 20, buy_dt: "2020-01-02", stop_loss: 21, target_price: null } as PositionRow;
const q = (c: HTMLElement, sel: string) => c.querySelector(sel) as HTMLInputElement;

describe("a holding's stop-loss and target", () => {
  beforeEach(() => {
    cleanup();
    vi.clearAllMocks();
  });

  it("reads the typed levels: empty clears, text that is no number is named", () => {
    expect(parseLevels("21", "23.5")).toEqual({ stop: 21, target: 23.5 });
    expect(parseLevels("", " ")).toEqual({ stop: null, target: null });
    expect(parseLevels("21", "abc")).toEqual({ bad: "target" });
    expect(parseLevels("x", "23")).toEqual({ bad: "stop" });
  });

  it("saves both with the page after it, and shows the backend's refusal", async () => {
    const onSaved = vi.fn();
    const page = { positions: [{ ...row, target_price: 23 }] };
    mocks.portfolioSetLevels.mockResolvedValueOnce({ status: "ok", data: page });
    // The page re-renders with the saved row, as the portfolio page does.
    let rerender = (_: unknown) => {};
    onSaved.mockImplementation((p: { positions: PositionRow[] }) => rerender(<PositionLevels row={p.positions[0]} onSaved={onSaved} />));
    const r = render(<PositionLevels row={row} onSaved={onSaved} />);
    rerender = r.rerender as (_: unknown) => void;
    const { container } = r;
    expect(q(container, "#pf-stop-input").value).toBe("21");
    expect(q(container, "#pf-target-input").value).toBe("");
    fireEvent.change(q(container, "#pf-target-input"), { target: { value: "23" } });
    await act(async () => {
      fireEvent.submit(q(container, "#pf-levels"));
    });
    expect(mocks.portfolioSetLevels).toHaveBeenCalledWith("002572", 21, 23);
    expect(onSaved).toHaveBeenCalledWith(page);
    expect(q(container, "#pf-levels-note").textContent).toBe("已保存");

    mocks.portfolioSetLevels.mockResolvedValueOnce({ status: "error", error: { kind: "invalid_input", message: "目标价必须高于止损价", code: null } });
    fireEvent.change(q(container, "#pf-target-input"), { target: { value: "20" } });
    await act(async () => {
      fireEvent.submit(q(container, "#pf-levels"));
    });
    expect(q(container, "#pf-levels-note").textContent).toContain("目标价必须高于止损价");
    expect(onSaved).toHaveBeenCalledTimes(1);

    fireEvent.change(q(container, "#pf-stop-input"), { target: { value: "abc" } });
    await act(async () => {
      fireEvent.submit(q(container, "#pf-levels"));
    });
    expect(q(container, "#pf-levels-note").textContent).toBe("「止损价」不是数字");
    expect(mocks.portfolioSetLevels).toHaveBeenCalledTimes(2);
  });
});
