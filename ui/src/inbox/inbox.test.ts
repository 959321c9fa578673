import { describe, expect, it } from "vitest";
import { translate } from "../i18n";
import { argsLine, beijingTime, deciderText, decisionText, expiresText, inboxErrorText, reasonOrNull, requesterText, statusText } from "./inbox";

const zh = (k: Parameters<typeof translate>[1], v?: Record<string, string | number>) => translate("zh", k, v);
const en = (k: Parameters<typeof translate>[1], v?: Record<string, string | number>) => translate("en", k, v);

describe("inbox wording", () => {
  it("shows instants in Beijing time, across the UTC date line", () => {
    const cases: [string, string][] = [
      ["2026-12-05T01:25:00Z", "2026-12-05 09:25"],
      ["2026-12-04T16:00:00Z", "2026-12-05 00:00"],
      ["2026-12-31T23:59:59Z", "2027-01-01 07:59"],
      ["2026-12-05T09:25:00+08:00", "2026-12-05 09:25"],
      ["not a time", "not a time"],
    ];
    for (const [input, want] of cases) expect(beijingTime(input)).toBe(want);
  });

  it("says when a pending request expires and how long is left, down to the expiry", () => {
    const expires = "2026-12-06T01:00:00Z";
    const at = Date.parse(expires);
    const cases: [number, string, string][] = [
      [at - (24 * 60 + 0) * 60_000, "2026-12-06 09:00 过期（剩余 24 小时 0 分）", "expires 2026-12-06 09:00 (24 h 0 min left)"],
      [at - 61 * 60_000, "2026-12-06 09:00 过期（剩余 1 小时 1 分）", "expires 2026-12-06 09:00 (1 h 1 min left)"],
      [at - 60 * 60_000, "2026-12-06 09:00 过期（剩余 1 小时 0 分）", "expires 2026-12-06 09:00 (1 h 0 min left)"],
      [at - 59 * 60_000 - 59_000, "2026-12-06 09:00 过期（剩余 59 分钟）", "expires 2026-12-06 09:00 (59 min left)"],
      [at - 1, "2026-12-06 09:00 过期（剩余 0 分钟）", "expires 2026-12-06 09:00 (0 min left)"],
      [at, "已于 2026-12-06 09:00 过期", "expired 2026-12-06 09:00"],
      [at + 60_000, "已于 2026-12-06 09:00 过期", "expired 2026-12-06 09:00"],
    ];
    for (const [now, z, e] of cases) {
      expect(expiresText(expires, now, zh)).toBe(z);
      expect(expiresText(expires, now, en)).toBe(e);
    }
  });

  it("names who asked and who decided", () => {
    expect(requesterText("schedule:收盘扫描", zh)).toBe("定时任务 收盘扫描");
    expect(requesterText("schedule:close", en)).toBe("schedule close");
    expect(requesterText("conversation", en)).toBe("an unattended run");
    expect(requesterText("something-else", en)).toBe("something-else");
    expect(requesterText("bot:desk", zh)).toBe("聊天机器人 desk");
    expect(requesterText("bot:desk", en)).toBe("chat bot desk");
    const deciders: [Parameters<typeof deciderText>[0], string, string][] = [
      [{ type: "app" }, "应用", "app"],
      [{ type: "cli" }, "命令行", "CLI"],
      [{ type: "dialog" }, "确认弹窗", "dialog"],
      [{ type: "always_allow" }, "总是允许", "always allow"],
      [{ type: "policy", approve: "queue" }, "--approve queue", "--approve queue"],
      [{ type: "expiry" }, "过期", "expiry"],
      [{ type: "bot", bot: "desk", sender: "42", label: "alice" }, "聊天机器人 desk · alice", "chat bot desk · alice"],
      [{ type: "bot", bot: "desk", sender: "42", label: "" }, "聊天机器人 desk · 42", "chat bot desk · 42"],
    ];
    for (const [by, z, e] of deciders) {
      expect(deciderText(by, zh)).toBe(z);
      expect(deciderText(by, en)).toBe(e);
    }
    expect(statusText("allowed", zh)).toBe("已允许");
    expect(statusText("expired", en)).toBe("Expired");
    expect(decisionText("queued", zh)).toBe("进入收件箱");
    expect(decisionText("allowed_always", en)).toBe("always allowed");
  });

  it("cuts long arguments on one line at the limit exactly", () => {
    const args = { action: "set_cash", free_cash: 5000 };
    const text = JSON.stringify(args);
    expect(argsLine(args, text.length)).toBe(text);
    expect(argsLine(args, text.length - 1)).toBe(`${text.slice(0, text.length - 2)}…`);
    expect(argsLine(args, text.length - 1)).toHaveLength(text.length - 1);
  });

  it("words each refusal and sends a blank reason as none", () => {
    expect(inboxErrorText({ kind: "not_found", message: "no approval request 'x'", code: null }, zh)).toBe("找不到这个请求：no approval request 'x'");
    expect(inboxErrorText({ kind: "conflict", message: "m", code: null }, en)).toBe("This request was already decided: m");
    expect(inboxErrorText({ kind: "expired", message: "m", code: null }, en)).toContain("has expired");
    expect(inboxErrorText({ kind: "internal", message: "disk full", code: null }, en)).toBe("disk full");
    expect(inboxErrorText({ kind: "busy", message: "busy", code: null }, en)).toBe("It cannot run now and is still pending (nothing was decided): busy");
    expect(inboxErrorText({ kind: "stale", message: "m", code: null }, zh)).toContain("再次批准");
    expect(reasonOrNull("   ")).toBeNull();
    expect(reasonOrNull(" 仓位过重 ")).toBe("仓位过重");
  });
});
