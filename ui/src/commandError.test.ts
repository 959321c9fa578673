// Every command fails with one `CommandError`; each page branches on its `kind` (and the
// stock `code` where it words one itself). These pin each page's wording per kind.
import { describe, expect, it } from "vitest";
import type { CommandError, CommandErrorKind } from "./bindings";
import { alertsText } from "./alerts/alerts";
import { errorText as pushErrorText } from "./alerts/PushPanel";
import { chatErrorText } from "./format";
import { translate } from "./i18n";
import { inboxErrorText } from "./inbox/inbox";
import { journalErrorText } from "./journal/journalModel";
import { errorText as mcpErrorText, mcpText } from "./mcp/McpPanel";
import { marketErrorText } from "./pages/Stock";
import { scheduleErrorText } from "./schedules/schedules";

const en = (k: Parameters<typeof translate>[1], v?: Record<string, string | number>) => translate("en", k, v);
const e = (kind: CommandErrorKind, message = "m", code: string | null = null): CommandError => ({ kind, message, code });

describe("command errors by kind", () => {
  it("a busy conversation is worded by the chat, anything else is the message", () => {
    expect(chatErrorText(e("busy", "a turn is already running in conversation 'c1'"), en)).toBe("A turn is still running in this conversation; please wait");
    expect(chatErrorText(e("setup", "no model is configured"), en)).toBe("no model is configured");
  });

  it("the stock page words an unknown code and a stock without bars by its code", () => {
    expect(marketErrorText(e("not_found", "unknown stock code 688999: …", "688999"))).toBe("未知股票代码 / unknown stock code: 688999");
    expect(marketErrorText(e("unavailable", "offline, nothing cached", "600000"))).toBe("600000: offline, nothing cached");
    expect(marketErrorText(e("invalid_input", "not a stock code"))).toBe("not a stock code");
    expect(marketErrorText(e("not_found", "no such thing"))).toBe("no such thing");
  });

  // The overview's, portfolio's and sync's wording: pages/workspaceModel.test.ts.
  it("the journal words offline and an unknown code", () => {
    expect(journalErrorText(e("not_found", "x", "688999"), "en")).toBe("Unknown stock code 688999");
    expect(journalErrorText(e("not_found", "no fill 3"), "en")).toBe("no fill 3");
    expect(journalErrorText(e("offline"), "zh")).toBe("离线");
  });

  it("the inbox tells decided, expired, not runnable and changed apart", () => {
    expect(inboxErrorText(e("conflict"), en)).toBe("This request was already decided: m");
    expect(inboxErrorText(e("expired"), en)).toContain("has expired");
    expect(inboxErrorText(e("busy", "busy"), en)).toBe("It cannot run now and is still pending (nothing was decided): busy");
    expect(inboxErrorText(e("stale"), en)).toContain("Allow it again");
    expect(inboxErrorText(e("setup", "no model"), en)).toBe("no model");
  });

  it("push, MCP and schedules word invalid input, not found and the rest", () => {
    const push = alertsText("en");
    expect(pushErrorText(e("invalid_input"), push)).toBe("Not added: m");
    expect(pushErrorText(e("not_found"), push)).toBe("Not found: m");
    expect(pushErrorText(e("unavailable"), push)).toBe("The keychain did not keep the secret; the channel was not added: m");
    expect(pushErrorText(e("internal"), push)).toBe("Error: m");
    const mcp = mcpText("en");
    expect(mcpErrorText(e("invalid_input"), mcp)).toBe("Not saved: m");
    expect(mcpErrorText(e("unavailable"), mcp)).toBe("Connection failed: m");
    expect(scheduleErrorText(e("invalid_input"), en)).toBe("Not added: m");
    expect(scheduleErrorText(e("setup"), en)).toBe("Something went wrong: m");
  });
});
