import { beforeEach, describe, expect, it, vi } from "vitest";
import { act, cleanup, fireEvent, render, waitFor } from "@testing-library/react";
import type { AuditEntry, InboxRequest } from "../bindings";

const mocks = vi.hoisted(() => ({
  inboxList: vi.fn(),
  inboxAllow: vi.fn(),
  inboxDeny: vi.fn(),
  approvalLog: vi.fn(),
  emitOpen: vi.fn(),
  inboxChanged: null as null | ((e: { payload: { pending: number } }) => void),
}));
vi.mock("../bindings", () => ({
  commands: mocks,
  events: {
    inboxChanged: {
      listen: (f: (e: { payload: { pending: number } }) => void) => {
        mocks.inboxChanged = f;
        return Promise.resolve(() => {});
      },
    },
    openConversation: { emit: mocks.emitOpen },
  },
}));

import InboxPage, { InboxNavButton } from "./InboxPage";

const ok = <T,>(data: T) => ({ status: "ok", data });

/** The first element matching `selector` once it is there. */
const found = (container: HTMLElement, selector: string) =>
  waitFor(() => {
    const el = container.querySelector(selector);
    expect(el).not.toBeNull();
    return el as HTMLElement;
  });

const write: InboxRequest = {
  id: "apr-write",
  conversation_id: "conv-1",
  tool: "write_file",
  display_name: "写入文件",
  args: { path: "/r/plan.md", content: "a\nB\n" },
  preview: { type: "file_write", path: "/r/plan.md", created: false, diff: "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n" },
  requested_by: "schedule:收盘扫描",
  created_at: "2026-12-05T07:05:00Z",
  expires_at: "2026-12-06T07:05:00Z",
  status: "pending",
  decided_at: null,
  decided_by: null,
  result: null,
};

const cash: InboxRequest = {
  ...write,
  id: "apr-cash",
  conversation_id: "conv-2",
  tool: "update_portfolio",
  display_name: "调整持仓",
  args: { action: "set_cash", free_cash: 5000 },
  preview: null,
  requested_by: "conversation",
  status: "allowed",
  decided_at: "2026-12-05T08:00:00Z",
  decided_by: { type: "cli" },
  result: "free cash set to 5000",
};

const logEntry: AuditEntry = {
  id: 7,
  at: "2026-12-05T08:00:00Z",
  conversation_id: "conv-2",
  request_id: "apr-cash",
  call_id: "call_cash_1",
  tool: "update_portfolio",
  args: { action: "set_cash", free_cash: 5000 },
  decision: "allowed",
  decided_by: { type: "cli" },
};

describe("InboxPage", () => {
  beforeEach(() => {
    cleanup();
    vi.clearAllMocks();
    vi.useRealTimers();
    mocks.inboxList.mockResolvedValue(ok({ requests: [write, cash], pending: 1 }));
    mocks.approvalLog.mockResolvedValue(ok([logEntry]));
  });

  it("shows a pending request with who asked, its expiry, the dialog's preview and its arguments", async () => {
    const { container } = render(<InboxPage />);
    const card = await waitFor(() => {
      const c = container.querySelector(".inbox-request[data-request-id='apr-write']");
      expect(c).not.toBeNull();
      return c as HTMLElement;
    });
    expect(card.textContent).toContain("定时任务 收盘扫描");
    expect(card.querySelector(".inbox-expires")?.textContent).toContain("2026-12-06 15:05 过期");
    // The approval dialog's own preview: the path and the coloured diff.
    expect(card.querySelector("#approval-path")?.textContent).toBe("/r/plan.md");
    expect(card.querySelector("#approval-diff .diff-del")?.textContent).toBe("-b");
    expect(card.querySelector("#approval-diff .diff-add")?.textContent).toBe("+B");
    expect(card.querySelector(".inbox-args")?.textContent).toContain('"content": "a\\nB\\n"');
    expect(container.textContent).toContain("等待审批（1）");
  });

  it("shows a queued buy's sizing: the rules' shares, the stop, the risk and the limits it breaks", async () => {
    const buy: InboxRequest = {
      ...write,
      id: "apr-buy",
      tool: "record_fill",
      display_name: "记录成交",
      args: { side: "buy", code: "000001", shares: 3000, price: 13 },
      preview: {
        type: "buy_sizing",
        code: "000001",
        name: "平安银行",
        proposed_shares: 3000,
        entry_e6: 13_000_000,
        sizing: {
          shares: 1200,
          stop_e6: 12_150_000,
          stop_from: "2×ATR14",
          risk_fen: 104_321,
          risk_pct: 0.95,
          risk_budget_fen: 110_000,
          equity_fen: 11_000_000,
          proposed_risk_fen: 260_100,
          proposed_risk_pct: 2.36,
          bound: [],
          why_none: null,
        },
        unavailable: null,
        breaches: [
          { type: "trade_risk", risk_pct: 2.36, limit_pct: 1 },
          { type: "positions", count: 2, limit: 1 },
        ],
        notes: [],
      },
    };
    mocks.inboxList.mockResolvedValue(ok({ requests: [buy], pending: 1 }));
    const { container } = render(<InboxPage />);
    const card = await found(container, ".inbox-request[data-request-id='apr-buy']");
    expect(card.querySelector("#sizing-proposed-shares")?.textContent).toBe("3000");
    expect(card.querySelector("#sizing-rule-shares")?.textContent).toBe("1200");
    expect(card.querySelector("#sizing-stop")?.textContent).toBe("12.15");
    expect(card.querySelector("#sizing-proposed-risk")?.textContent).toBe("2,601.00 (2.36%)");
    const items = [...card.querySelectorAll("#sizing-breaches li")].map((li) => [li.getAttribute("data-limit"), li.textContent]);
    expect(items).toEqual([
      ["trade_risk", "这笔止损处亏损 2.36% > 每笔风险 1.00%"],
      ["positions", "持仓 2 只 > 1 只"],
    ]);
    expect(card.querySelector(".inbox-allow")).not.toBeNull();
  });

  it("shows a decided request's status, who decided and what the call returned", async () => {
    const { container } = render(<InboxPage />);
    const card = await waitFor(() => {
      const c = container.querySelector(".inbox-request[data-request-id='apr-cash']");
      expect(c).not.toBeNull();
      return c as HTMLElement;
    });
    expect(card.getAttribute("data-status")).toBe("allowed");
    expect(card.querySelector(".inbox-decided")?.textContent).toBe("已允许 · 命令行 · 2026-12-05 16:00");
    expect(card.querySelector(".inbox-result pre")?.textContent).toBe("free cash set to 5000");
    expect(card.querySelector(".inbox-allow")).toBeNull();
    fireEvent.click(card.querySelector(".inbox-open-conversation") as HTMLElement);
    expect(mocks.emitOpen).toHaveBeenCalledWith({ conversation_id: "conv-2" });
  });

  it("allows through the backend and reloads", async () => {
    mocks.inboxAllow.mockResolvedValue(ok({ request: { ...write, status: "allowed" }, told_later: null }));
    const { container } = render(<InboxPage />);
    const allow = await found(container, ".inbox-request[data-request-id='apr-write'] .inbox-allow");
    mocks.inboxList.mockResolvedValue(ok({ requests: [{ ...write, status: "allowed", decided_by: { type: "app" }, decided_at: "2026-12-05T08:10:00Z" }], pending: 0 }));
    await act(async () => {
      fireEvent.click(allow);
    });
    expect(mocks.inboxAllow).toHaveBeenCalledWith("apr-write");
    await waitFor(() => expect(container.querySelector(".inbox-request[data-request-id='apr-write']")?.getAttribute("data-status")).toBe("allowed"));
    expect(container.querySelector(".inbox-decided")?.getAttribute("data-decided-by")).toBe("app");
    expect(container.textContent).toContain("等待审批（0）");
  });

  it("denies with the reason typed, or none when blank, and words a refusal", async () => {
    mocks.inboxDeny.mockResolvedValueOnce(ok({ request: { ...write, status: "denied" }, told_later: "no model is set" }));
    const { container } = render(<InboxPage />);
    const card = await found(container, ".inbox-request[data-request-id='apr-write']");
    fireEvent.click(card.querySelector(".inbox-deny") as HTMLElement);
    fireEvent.change(card.querySelector(".inbox-deny-reason") as HTMLElement, { target: { value: "  仓位过重 " } });
    await act(async () => {
      fireEvent.click(card.querySelector(".inbox-deny-confirm") as HTMLElement);
    });
    expect(mocks.inboxDeny).toHaveBeenLastCalledWith("apr-write", "仓位过重");
    // Recorded with no model: the page says the conversation hears of it later.
    await waitFor(() => expect(container.querySelector(".inbox-told-later")?.textContent).toBe("决定已记录；对话会在有可用模型后收到通知：no model is set"));

    mocks.inboxDeny.mockResolvedValueOnce({ status: "error", error: { kind: "conflict", message: "approval request 'apr-write' was already denied; nothing changed", code: null } });
    fireEvent.change(card.querySelector(".inbox-deny-reason") as HTMLElement, { target: { value: "   " } });
    await act(async () => {
      fireEvent.click(card.querySelector(".inbox-deny-confirm") as HTMLElement);
    });
    expect(mocks.inboxDeny).toHaveBeenLastCalledWith("apr-write", null);
    await waitFor(() =>
      expect(card.querySelector(".inbox-error")?.textContent).toBe("这个请求已经被处理过：approval request 'apr-write' was already denied; nothing changed"),
    );
  });

  it("shows the new preview and asks again when what the call would do changed", async () => {
    const changed = { type: "file_write" as const, path: "/r/plan.md", created: false, diff: "--- a\n+++ b\n@@ -1 +1,2 @@\n-mine\n+a\n+B\n" };
    mocks.inboxAllow.mockResolvedValueOnce({ status: "error", error: { kind: "stale", message: "m", code: null } });
    const { container } = render(<InboxPage />);
    const allow = await found(container, ".inbox-request[data-request-id='apr-write'] .inbox-allow");
    mocks.inboxList.mockResolvedValue(ok({ requests: [{ ...write, preview: changed }], pending: 1 }));
    await act(async () => {
      fireEvent.click(allow);
    });
    const card = await found(container, ".inbox-request[data-request-id='apr-write']");
    expect(card.getAttribute("data-status")).toBe("pending");
    await waitFor(() => expect(card.textContent).toContain("-mine"));
    expect(card.querySelector(".inbox-error")?.textContent).toContain("再次批准");
    expect(card.querySelector(".inbox-allow")).not.toBeNull();
  });

  it("lists the approval log with time, tool, masked arguments, decision and who decided", async () => {
    const { container } = render(<InboxPage />);
    const row = await waitFor(() => {
      const r = container.querySelector("#approval-log .inbox-log-row");
      expect(r).not.toBeNull();
      return r as HTMLElement;
    });
    const cells = [...row.querySelectorAll("td")].map((td) => td.textContent);
    expect(cells).toEqual(["2026-12-05 16:00", "update_portfolio", '{"action":"set_cash","free_cash":5000}', "允许", "命令行"]);
    expect(row.getAttribute("data-decided-by")).toBe("cli");
    expect(row.getAttribute("data-request-id")).toBe("apr-cash");
    expect(row.getAttribute("data-call-id")).toBe("call_cash_1");
  });

  it("reloads when the inbox changes", async () => {
    const { container } = render(<InboxPage />);
    await waitFor(() => expect(container.querySelector(".inbox-request")).not.toBeNull());
    mocks.inboxList.mockResolvedValue(ok({ requests: [], pending: 0 }));
    mocks.approvalLog.mockResolvedValue(ok([]));
    await act(async () => {
      mocks.inboxChanged?.({ payload: { pending: 0 } });
    });
    await waitFor(() => expect(container.querySelector(".inbox-request")).toBeNull());
    expect(container.querySelector(".inbox-empty")?.textContent).toBe("没有等待审批的请求。");
    expect(container.querySelector(".inbox-log-empty")).not.toBeNull();
  });
});

describe("InboxNavButton", () => {
  beforeEach(() => {
    cleanup();
    vi.clearAllMocks();
  });

  it("shows the pending count from the first read, follows inbox-changed, and hides at 0", async () => {
    mocks.inboxList.mockResolvedValue(ok({ requests: [write], pending: 1 }));
    const onClick = vi.fn();
    const { container } = render(<InboxNavButton active={false} onClick={onClick} />);
    await waitFor(() => expect(container.querySelector("#inbox-badge")?.textContent).toBe("1"));
    await act(async () => {
      mocks.inboxChanged?.({ payload: { pending: 3 } });
    });
    expect(container.querySelector("#inbox-badge")?.textContent).toBe("3");
    await act(async () => {
      mocks.inboxChanged?.({ payload: { pending: 0 } });
    });
    expect(container.querySelector("#inbox-badge")).toBeNull();
    expect(container.querySelector("#nav-inbox")?.getAttribute("data-pending")).toBe("0");
    fireEvent.click(container.querySelector("#nav-inbox") as HTMLElement);
    expect(onClick).toHaveBeenCalled();
  });
});
