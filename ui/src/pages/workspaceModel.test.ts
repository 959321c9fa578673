import { describe, expect, it } from "vitest";
import type { TaskInfo } from "../bindings";
import { formToEdit, lastScreen, monthsBefore, parseNumber, todayIso, workspaceErrorText } from "./workspaceModel";
import { workspaceText } from "./workspaceText";

const zh = (k: Parameters<typeof workspaceText>[1], v?: Record<string, string | number>) => workspaceText("zh", k, v);
const en = (k: Parameters<typeof workspaceText>[1], v?: Record<string, string | number>) => workspaceText("en", k, v);

describe("portfolio form", () => {
  it("turns the form into an add or an update, leaving the rules to the backend", () => {
    const form = { code: " 000001 ", shares: "1,000", cost: "12.5", buyDate: "2020-01-02" };
    expect(formToEdit(form, null, zh)).toEqual({ type: "add", code: "000001", shares: 1000, cost_price: 12.5, buy_dt: "2020-01-02" });
    // negative numbers go through: the backend says why they are refused
    expect(formToEdit({ ...form, cost: "-3" }, null, zh)).toMatchObject({ cost_price: -3 });
    expect(formToEdit({ ...form, cost: "" }, "000001", zh)).toEqual({ type: "update", code: "000001", shares: 1000, cost_price: null });
  });

  it("says which field is not a number", () => {
    const form = { code: "000001", shares: "abc", cost: "12.5", buyDate: "2020-01-02" };
    expect(formToEdit(form, null, zh)).toBe("股数 必须是数字");
    expect(formToEdit({ ...form, shares: "100", cost: "x" }, null, en)).toBe("Cost must be a number");
    expect(formToEdit({ ...form, shares: "" }, null, en)).toBe("Shares must be a number");
  });

  it("parses numbers strictly", () => {
    const cases: [string, number | null][] = [
      ["12.5", 12.5],
      [" 1,000 ", 1000],
      ["", null],
      ["1e3", 1000],
      ["12a", null],
      ["NaN", null],
    ];
    for (const [s, want] of cases) expect(parseNumber(s)).toBe(want);
  });
});

describe("workspace errors", () => {
  it("words each kind in the page's language", () => {
    expect(workspaceErrorText({ kind: "offline", message: "offline: no live data source is enabled", code: null }, en)).toMatch(/^Offline: no live data source/);
    expect(workspaceErrorText({ kind: "offline", message: "offline: no live data source is enabled", code: null }, zh)).toMatch(/^离线/);
    expect(workspaceErrorText({ kind: "not_found", message: "unknown stock code 688999: not in the stock list", code: "688999" }, en)).toBe("Unknown stock code 688999: not in the stock list");
    expect(workspaceErrorText({ kind: "invalid_input", message: "cost_price 必须大于 0", code: null }, zh)).toBe("cost_price 必须大于 0");
    expect(workspaceErrorText({ kind: "invalid_input", message: "cost_price 必须大于 0", code: null }, en, "en")).toBe("Cost must be greater than 0");
    // a refusal not in the table is shown as the backend said it
    expect(workspaceErrorText({ kind: "invalid_input", message: "单次最多 30 条", code: null }, en, "en")).toBe("单次最多 30 条");
    expect(workspaceErrorText({ kind: "unavailable", message: "timeout", code: "000001.SZ" }, zh)).toBe("000001.SZ 同步失败：timeout");
    // without a stock code the kind has no wording of its own: the message
    expect(workspaceErrorText({ kind: "not_found", message: "no background task x", code: null }, en)).toBe("no background task x");
    expect(workspaceErrorText({ kind: "unavailable", message: "the keychain is locked", code: null }, en)).toBe("the keychain is locked");
  });
});

describe("overview helpers", () => {
  const task = (id: string, tool: string, status: TaskInfo["status"], started: string): TaskInfo => ({
    task_id: id,
    tool_name: tool,
    display_name: tool,
    status,
    progress: { stage: "" },
    started_at: started,
    finished_at: null,
    session_id: null,
    result_summary: null,
    result: null,
    error: null,
  });

  it("finds the newest finished screen", () => {
    const tasks = [
      task("a", "screen_stocks", "completed", "2026-12-01T01:00:00Z"),
      task("b", "screen_stocks", "completed", "2026-12-02T01:00:00Z"),
      task("c", "screen_stocks", "failed", "2026-12-03T01:00:00Z"),
      task("d", "run_backtest", "completed", "2026-12-04T01:00:00Z"),
    ];
    expect(lastScreen(tasks)?.task_id).toBe("b");
    expect(lastScreen(tasks.slice(2))).toBeNull();
  });

  it("moves a date back by months, keeping the day inside the month", () => {
    expect(monthsBefore("2020-06-16", 6)).toBe("2019-12-16");
    expect(monthsBefore("2020-08-31", 6)).toBe("2020-02-29");
    expect(monthsBefore("2021-01-15", 1)).toBe("2020-12-15");
    expect(todayIso(new Date(2020, 0, 2))).toBe("2020-01-02");
  });
});
