import { describe, expect, it } from "vitest";
import { render } from "@testing-library/react";
import type { ApprovalNotice, Decider, InboxStatus } from "../bindings";
import { translate } from "../i18n";
import ApprovalNoticeLine, { approvalNoticeText } from "./ApprovalNoticeLine";

const notice = (status: InboxStatus, by: Decider | null, summary: string | null = null, reason: string | null = null): ApprovalNotice => ({
  request_id: "call_1",
  tool_name: "update_portfolio",
  display_name: "调仓",
  status,
  decided_by: by,
  summary,
  reason,
});

describe("an approval notice's line", () => {
  it("says what happened to the queued call and who decided, in the page's language", () => {
    const cases: [ApprovalNotice, "zh" | "en", string][] = [
      [notice("allowed", { type: "app" }, "现金 5000"), "zh", "✅ 已批准（应用内）并执行：调仓"],
      [notice("allowed", { type: "cli" }, "现金 5000"), "en", "✅ Approved from the command line and run: 调仓"],
      [notice("allowed", { type: "app" }, null, "持仓表被锁"), "zh", "✗ 已批准（应用内），但未能执行：调仓 持仓表被锁"],
      [notice("denied", { type: "app" }, null, "不调"), "zh", "⛔ 已拒绝（应用内）：调仓 不调"],
      [notice("denied", { type: "cli" }), "en", "⛔ Denied from the command line: 调仓"],
      [notice("allowed", { type: "bot", bot: "tg", sender: "7", label: "alice" }, "现金 5000"), "zh", "✅ 已批准（聊天机器人 tg · alice）并执行：调仓"],
      [notice("denied", { type: "bot", bot: "tg", sender: "7", label: "" }), "en", "⛔ Denied from chat bot tg by 7: 调仓"],
      [notice("expired", { type: "expiry" }), "zh", "⌛ 无人审批，已过期：调仓"],
      [notice("expired", { type: "expiry" }), "en", "⌛ Expired with nobody answering: 调仓"],
      [notice("denied", { type: "app" }, null, "x".repeat(100)), "en", `⛔ Denied in the app: 调仓 ${"x".repeat(80)}`],
    ];
    for (const [n, lang, want] of cases) {
      expect(approvalNoticeText(n, (k, v) => translate(lang, k, v))).toBe(want);
    }
  });

  it("keeps an allowed call's result one click away, and nothing of a denial's", () => {
    const allowed = render(<ApprovalNoticeLine notice={notice("allowed", { type: "app" }, "现金 5000")} />);
    const line = allowed.container.querySelector(".approval-notice") as HTMLElement;
    expect(line.dataset.status).toBe("allowed");
    expect(line.dataset.requestId).toBe("call_1");
    expect(line.querySelector(".notice-summary pre")?.textContent).toBe("现金 5000");
    const denied = render(<ApprovalNoticeLine notice={notice("denied", { type: "app" }, "ignored", "不调")} />);
    expect(denied.container.querySelector(".notice-summary")).toBeNull();
  });
});
