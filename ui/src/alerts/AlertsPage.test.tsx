import { beforeEach, describe, expect, it, vi } from "vitest";
import { act, cleanup, fireEvent, render, waitFor } from "@testing-library/react";
import type { AlertRule, FiredAlert } from "../bindings";

const mocks = vi.hoisted(() => ({
  alertHistory: vi.fn(),
  alertRules: vi.fn(),
  alertAdd: vi.fn(),
  alertSetEnabled: vi.fn(),
  alertRemove: vi.fn(),
  startTask: vi.fn(),
  listTasks: vi.fn(),
  taskChanged: null as null | ((e: { payload: { task: unknown } }) => void),
}));
vi.mock("../bindings", () => ({
  commands: mocks,
  events: {
    taskChanged: {
      listen: (f: (e: { payload: { task: unknown } }) => void) => {
        mocks.taskChanged = f;
        return Promise.resolve(() => {});
      },
    },
    scheduleRan: { listen: () => Promise.resolve(() => {}) },
  },
}));

import AlertsPage from "./AlertsPage";
import { LanguageContext } from "../i18n";

const ok = <T,>(data: T) => ({ status: "ok", data });
const fired: FiredAlert = {
  id: 7,
  rule_id: 1,
  code: "000001",
  name: "平安银行",
  bar_date: "2020-03-02",
  condition: { type: "volume_ratio", k: 2 },
  figures: { type: "volume_ratio", volume: 3e6, avg_volume_20: 1e6, ratio: 3, k: 2 },
  delivered_to: [],
  delivery: "recorded",
  created_at: "2026-12-05T07:00:00Z",
};
const rule: AlertRule = { id: 1, target: { type: "stock", code: "000001" }, condition: { type: "volume_ratio", k: 2 }, cooldown_days: 1, enabled: true, created_at: "2026-12-05T07:00:00Z" };
const q = (c: HTMLElement, sel: string) => c.querySelector(sel) as HTMLElement;

describe("the alert centre", () => {
  beforeEach(() => {
    cleanup();
    vi.clearAllMocks();
    localStorage.clear();
    mocks.alertHistory.mockResolvedValue(ok([fired]));
    mocks.alertRules.mockResolvedValue(ok([rule]));
  });

  it("lists what fired with its figures, opens its bar, and marks it seen", async () => {
    const open = vi.fn();
    const { container } = render(<AlertsPage preset={null} onOpenStock={open} />);
    await waitFor(() => expect(q(container, ".alert-row")).not.toBeNull());
    expect(q(container, ".alert-condition").textContent).toBe("成交量 ≥ 20 日均量的 2 倍");
    expect(q(container, ".alert-figures").textContent).toBe("成交量 3000000，为 20 日均量 1000000 的 3 倍");
    expect(localStorage.getItem("wyckoff.alertsSeen")).toBe("7");
    fireEvent.click(q(container, ".alert-open"));
    expect(open).toHaveBeenCalledWith("000001", 20200302);
  });

  it("marks an alert fired during the session with its quote time, and a close's alert without", async () => {
    const intraday: FiredAlert = { ...fired, id: 9, bar_date: "2020-06-17", intraday_at: "2020-06-17 10:42" };
    const lateQuote: FiredAlert = { ...fired, id: 10, bar_date: "2020-06-17", intraday_at: "2020-06-18 09:31" };
    mocks.alertHistory.mockResolvedValue(ok([lateQuote, intraday, fired]));
    const { container } = render(<AlertsPage preset={null} onOpenStock={vi.fn()} />);
    await waitFor(() => expect(container.querySelectorAll(".alert-row")).toHaveLength(3));
    const row = (id: number) => q(container, `.alert-row[data-id='${id}']`);
    expect(row(9).dataset.intradayAt).toBe("2020-06-17 10:42");
    const badge = row(9).querySelector(".alert-intraday") as HTMLElement;
    expect(badge.textContent).toBe("盘中 10:42");
    expect(badge.title).toBe("盘中按实时行情触发（2020-06-17 10:42 北京时间，未收盘的部分K线）");
    // the volume that fired it is the day's pace so far, not a close's volume
    expect(row(9).querySelector(".alert-figures")?.textContent).toBe("按时段折算全天成交量 3000000，为 20 日均量 1000000 的 3 倍");
    expect(row(7).querySelector(".alert-figures")?.textContent).toBe("成交量 3000000，为 20 日均量 1000000 的 3 倍");
    // a quote of another day than the bar's shows its whole time
    expect(row(10).querySelector(".alert-intraday")?.textContent).toBe("盘中 2020-06-18 09:31");
    expect(row(7).querySelector(".alert-intraday")).toBeNull();
    expect(row(7).dataset.intradayAt).toBeUndefined();
  });

  it("says intraday in English too", async () => {
    mocks.alertHistory.mockResolvedValue(ok([{ ...fired, bar_date: "2020-06-17", intraday_at: "2020-06-17 14:55" }]));
    const { container } = render(
      <LanguageContext.Provider value="en">
        <AlertsPage preset={null} onOpenStock={vi.fn()} />
      </LanguageContext.Provider>,
    );
    await waitFor(() => expect(q(container, ".alert-intraday")).not.toBeNull());
    expect(q(container, ".alert-intraday").textContent).toBe("intraday 14:55");
  });

  it("names a holding's target (no rule) and quotes its close and target", async () => {
    const target: FiredAlert = { ...fired, id: 8, rule_id: null, code: "002572", name: "索菲亚", bar_date: "2020-06-16", condition: { type: "target_reached" }, figures: { type: "target_reached", close: 23.22, target: 23 } };
    mocks.alertHistory.mockResolvedValue(ok([target]));
    const { container } = render(<AlertsPage preset={null} onOpenStock={vi.fn()} />);
    await waitFor(() => expect(q(container, ".alert-row")).not.toBeNull());
    expect(q(container, ".alert-condition").textContent).toBe("持仓目标价");
    expect(q(container, ".alert-figures").textContent).toBe("收盘 23.22，目标 23");
  });

  it("adds a rule for the stock it was opened with; a refusal is shown in words", async () => {
    mocks.alertAdd.mockResolvedValueOnce({ status: "error", error: { kind: "invalid_input", message: "stock 688999 is not in the stock list", code: null } }).mockResolvedValueOnce(ok({ ...rule, id: 2 }));
    const { container } = render(<AlertsPage preset={{ type: "stock", code: "688999" }} onOpenStock={() => {}} />);
    await waitFor(() => expect((q(container, "#alert-code") as HTMLInputElement).value).toBe("688999"));
    fireEvent.change(q(container, "#alert-value"), { target: { value: "20" } });
    await act(async () => {
      fireEvent.submit(q(container, "#alert-form"));
    });
    expect(mocks.alertAdd).toHaveBeenCalledWith({ type: "stock", code: "688999" }, { type: "price_above", level: 20 }, 1);
    expect(q(container, "#alert-note").textContent).toBe("未添加：stock 688999 is not in the stock list");
    fireEvent.change(q(container, "#alert-code"), { target: { value: "000001" } });
    await act(async () => {
      fireEvent.submit(q(container, "#alert-form"));
    });
    expect(q(container, "#alert-note").textContent).toBe("已添加规则 #2");
  });

  it("checks now as a background task and says what the check found when it ends", async () => {
    mocks.startTask.mockResolvedValue(ok({ task_id: "bg_1_check_alerts" }));
    mocks.listTasks.mockResolvedValue(ok([]));
    const { container } = render(<AlertsPage preset={null} onOpenStock={() => {}} />);
    await act(async () => {
      fireEvent.click(q(container, "#alerts-check"));
    });
    expect(mocks.startTask).toHaveBeenCalledWith({ type: "alerts" });
    await waitFor(() => expect(mocks.taskChanged).not.toBeNull());
    await act(async () => {
      mocks.taskChanged?.({ payload: { task: { task_id: "bg_1_check_alerts", status: "completed", result_summary: JSON.stringify({ data_date: "2020-03-02", fired: 1, suppressed: 2, unevaluated: 0 }) } } });
    });
    expect(q(container, "#alerts-checked").textContent).toBe("数据日期 2020-03-02：触发 1 条，冷却中 2 条，缺数据 0 条");
    expect(container.querySelectorAll(".alerts-check-note")).toHaveLength(0);
  });

  it("shows a check's data notes under what it found", async () => {
    mocks.startTask.mockResolvedValue(ok({ task_id: "bg_2_check_alerts" }));
    mocks.listTasks.mockResolvedValue(ok([]));
    const { container } = render(<AlertsPage preset={null} onOpenStock={() => {}} />);
    await act(async () => {
      fireEvent.click(q(container, "#alerts-check"));
    });
    await waitFor(() => expect(mocks.taskChanged).not.toBeNull());
    const note = "1 只股票在 2020-03-02 前已退市，不在当日检查范围内：600002";
    await act(async () => {
      mocks.taskChanged?.({ payload: { task: { task_id: "bg_2_check_alerts", status: "completed", result_summary: JSON.stringify({ data_date: "2020-03-02", fired: 0, suppressed: 0, unevaluated: 0, notes: [note] }) } } });
    });
    expect(q(container, "#alerts-checked").textContent).toBe("数据日期 2020-03-02：触发 0 条，冷却中 0 条，缺数据 0 条");
    expect([...container.querySelectorAll(".alerts-check-note")].map((p) => p.textContent)).toEqual([note]);
  });

  it("starts a rule on the whole watchlist when opened from the watchlist", async () => {
    const { container } = render(<AlertsPage preset={{ type: "watchlist" }} onOpenStock={() => {}} />);
    await waitFor(() => expect((q(container, "#alert-target-watchlist") as HTMLInputElement).checked).toBe(true));
    expect(q(container, "#alert-code")).toBeNull();
  });
});
