import { describe, expect, it } from "vitest";
import { cleanup, render } from "@testing-library/react";
import type { HistoryMessage, RuntimeEvent } from "../bindings";
import { LanguageContext } from "../i18n";
import { historyItems } from "./history";
import { replay, type ToolCard } from "./reducer";
import ToolCardView from "./ToolCardView";
import { mcpDisplayName, toolDisplayName } from "./toolNames";

const NAME = "mcp__time__get_current_time";
const SHOWN = "MCP · time · get_current_time";
const args = { timezone: "Asia/Shanghai" };

function cardName(card: ToolCard, lang: "zh" | "en" = "zh"): string {
  cleanup();
  const { container } = render(
    <LanguageContext.Provider value={lang}>
      <ToolCardView card={card} />
    </LanguageContext.Provider>,
  );
  return container.querySelector(".tool-name")?.textContent ?? "";
}

const toolCards = (items: { kind: string }[]) => items.filter((i): i is ToolCard => i.kind === "tool");

describe("an MCP tool's card names the server", () => {
  it("live: before it starts (awaiting approval) and once the runtime names it", () => {
    const calls = [{ type: "tool_calls", calls: [{ id: "c1", name: NAME, args }], discard_text: false }] as RuntimeEvent[];
    expect(cardName(toolCards(replay(calls).items)[0])).toBe(SHOWN);
    const started = [...calls, { type: "tool_start", id: "c1", name: NAME, display_name: SHOWN, args }] as RuntimeEvent[];
    const card = toolCards(replay(started).items)[0];
    expect(card.status).toBe("running");
    expect(cardName(card)).toBe(SHOWN);
    expect(cardName(card, "en")).toBe(SHOWN);
  });

  it("reopened: the stored call has only the raw name", () => {
    const base = { interrupted: false, skill: null, task_notice: null, approval_notice: null };
    const msgs: HistoryMessage[] = [
      { ...base, seq: 1, message: { role: "user", content: "北京现在几点？" } },
      { ...base, seq: 2, message: { role: "assistant", content: "", tool_calls: [{ id: "c1", name: NAME, args }] } },
      { ...base, seq: 3, message: { role: "tool", tool_call_id: "c1", name: NAME, content: '{"datetime":"2026-12-05T20:00:00+08:00"}' } },
    ];
    const card = toolCards(historyItems(msgs))[0];
    expect(card.status).toBe("ok");
    expect(cardName(card)).toBe(SHOWN);
    expect(cardName(card, "en")).toBe(SHOWN);
  });

  it("reads server and tool from the name, and leaves other names alone", () => {
    expect(mcpDisplayName("mcp__my-server__search_repos")).toBe("MCP · my-server · search_repos");
    expect(mcpDisplayName("mcp___x__t")).toBe("MCP · _x · t");
    expect(mcpDisplayName("mcp__time")).toBeNull();
    expect(mcpDisplayName("mcp__time__")).toBeNull();
    expect(toolDisplayName("mcp__time")).toBe("mcp__time");
    expect(toolDisplayName("some_future_tool")).toBe("some_future_tool");
    expect(toolDisplayName("portfolio")).not.toBe("portfolio");
  });
});
