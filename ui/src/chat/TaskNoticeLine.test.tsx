import { describe, expect, it } from "vitest";
import type { TaskNotice } from "../bindings";
import { translate } from "../i18n";
import { noticeText } from "./TaskNoticeLine";

const notice = (outcome: TaskNotice["outcome"], error: string | null = null): TaskNotice => ({
  task_id: "bg_1_screen_stocks",
  tool_name: "screen_stocks",
  display_name: "全市场扫描",
  outcome,
  summary: outcome === "completed" ? '{"candidates":3}' : null,
  error,
});

describe("a task notice's line", () => {
  it("is worded from the notice's fields in the page's language", () => {
    const cases: [TaskNotice | null, "zh" | "en", string][] = [
      [notice("completed"), "zh", "✅ 后台任务完成：全市场扫描"],
      [notice("completed"), "en", "✅ Background task finished: 全市场扫描"],
      [notice("failed", "数据缺失"), "zh", "✗ 后台任务失败：全市场扫描 数据缺失"],
      [notice("failed"), "en", "✗ Background task failed: 全市场扫描"],
      [notice("cancelled", "cancelled"), "zh", "✗ 后台任务已取消：全市场扫描"],
      [notice("cancelled"), "en", "✗ Background task cancelled: 全市场扫描"],
      [null, "zh", "后台任务通知"],
      [null, "en", "Background task notice"],
    ];
    for (const [n, lang, want] of cases) {
      expect(noticeText(n, (k, v) => translate(lang, k, v))).toBe(want);
    }
  });

  it("cuts a long failure reason to 80 characters", () => {
    const line = noticeText(notice("failed", "x".repeat(200)), (k, v) => translate("zh", k, v));
    expect(line).toBe(`✗ 后台任务失败：全市场扫描 ${"x".repeat(80)}`);
  });
});
