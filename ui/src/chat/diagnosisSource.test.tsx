// A diagnosis card's figures open the bar they came from (the stock page at
// the diagnosis's as-of date), or the tool result when there is no bar to open.
import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import type { RuntimeEvent, Value } from "../bindings";
import { OpenStockAtContext } from "../review/openAt";
import { replay, type ToolCard } from "./reducer";
import ToolCardView from "./ToolCardView";
import toolTurn from "./fixtures/tool_turn.json";

afterEach(cleanup);

const base = replay(toolTurn as RuntimeEvent[]).items.find((i): i is ToolCard => i.kind === "tool") as ToolCard;

// As analyze_stock returns it (diagnose mode): the market layer's as_of is the last bar's date.
const result = {
  code: "600519",
  name: "贵州茅台",
  health: "🟡警戒",
  ma_pattern: "MA50<MA200(偏弱)",
  l2_channel: "吸筹通道",
  l4_triggers: ["spring"],
  latest_close: 1423.4561,
  day_change_pct: -1.23456,
  stop_loss_price: 1395.0049,
  targets: { conservative: 1512.3456, aggressive: null, candidates: [] },
  data_status: "stale",
  as_of: "2026-11-28",
};
const card = (r: Value): ToolCard => ({ ...base, result: r });
const figure = (label: string) => screen.getByText(label).nextSibling?.firstChild as HTMLElement;

function withOpen(c: ToolCard) {
  const open = vi.fn();
  const view = render(
    <OpenStockAtContext.Provider value={open}>
      <ToolCardView card={c} />
    </OpenStockAtContext.Provider>,
  );
  return { open, view };
}

describe("diagnosis figures open their source", () => {
  it("each figure opens the stock page at the diagnosis's bar", () => {
    const { open, view } = withOpen(card(result));
    for (const [label, text] of [
      ["最新价", "1423.46 (-1.23%)"],
      ["止损", "1395.00"],
      ["目标位", "保守 1512.35 / 激进 —"],
      ["数据", "过期 · 2026-11-28"],
    ]) {
      const b = figure(label);
      expect(b.tagName).toBe("BUTTON");
      expect(b.textContent).toBe(text);
      open.mockClear();
      fireEvent.click(b);
      expect(open.mock.calls).toEqual([["600519", 20261128]]);
    }
    expect(figure("止损").getAttribute("title")).toContain("2026-11-28");
    // Labels are not figures; opening a bar does not unfold the raw result.
    expect(screen.getByText("健康度").nextSibling?.firstChild?.nodeName).toBe("#text");
    expect(view.container.querySelector("pre.json")).toBeNull();
  });

  it("reads the engine's latest_date when the result has no as_of", () => {
    const { as_of: _dropped, ...engine } = result;
    const { open } = withOpen(card({ ...engine, latest_date: "2026-11-27" }));
    fireEvent.click(figure("止损"));
    expect(open).toHaveBeenCalledWith("600519", 20261127);
  });

  it("opens the tool result when there is no bar to open", () => {
    const { as_of: _dropped, ...undated } = result;
    const { open, view } = withOpen(card(undated));
    expect(view.container.querySelector("pre.json")).toBeNull();
    fireEvent.click(figure("最新价"));
    expect(open).not.toHaveBeenCalled();
    const shown = [...view.container.querySelectorAll("pre.json")].map((p) => p.textContent ?? "");
    expect(shown).toHaveLength(2);
    expect(JSON.parse(shown[1])).toEqual(undated);
  });

  it("opens the tool result where no stock page can be opened, and from its own button", () => {
    const { container } = render(<ToolCardView card={card(result)} />);
    fireEvent.click(figure("止损"));
    expect(container.querySelectorAll("pre.json")).toHaveLength(2);
    cleanup();
    const again = withOpen(card(result));
    fireEvent.click(screen.getByText("原始结果"));
    expect(again.open).not.toHaveBeenCalled();
    expect(again.view.container.querySelectorAll("pre.json")).toHaveLength(2);
  });

  it("leaves a missing figure as plain —", () => {
    withOpen(card({ ...result, stop_loss_price: null }));
    expect(screen.getByText("止损").nextSibling?.textContent).toBe("—");
    expect(screen.getByText("止损").nextSibling?.firstChild?.nodeName).toBe("#text");
  });
});
