import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { DeskContents, FirstRun, FirstRunSteps, IndustriesFailure, TdxImportReport } from "../bindings";

const mocks = vi.hoisted(() => ({
  firstRun: vi.fn(),
  setFirstRunStep: vi.fn(),
  fullSyncEstimate: vi.fn(),
  importTdx: vi.fn(),
  importWatchlistFile: vi.fn(),
  startTask: vi.fn(),
}));
vi.mock("../bindings", () => ({ commands: mocks }));
vi.mock("@tauri-apps/api/core", () => ({ Channel: class {} }));

import FirstRunGate, { failureText } from "./FirstRun";
import { firstRunText } from "./text";
import { LanguageContext } from "../i18n";

const ok = <T,>(data: T) => ({ status: "ok", data });
const fresh: DeskContents = { stocks: 8, stocks_beyond_bundled: 0, indices: 0, newest_bar: 20200616, watchlist: 0, model: null, stock_list: 4000 };

// the desk's state kept between calls, as the backend keeps it
let steps: FirstRunSteps;
let contents: DeskContents;
const state = (): FirstRun => ({
  show: !steps.finished,
  steps: { ...steps },
  contents: { ...contents },
});

const report: TdxImportReport = {
  path: "/tdx",
  files: 5,
  skipped: [{ kind: "index", files: 1 }],
  stocks: 4,
  stocks_written: 4,
  bars_added: 1000,
  bars_changed: 0,
  bars_unchanged: 0,
  kept_adjusted: 0,
  raw_filled: 0,
  not_mixed: 0,
  bundled_replaced: 0,
  rejected: [{ path: "/tdx/vipdoc/sh/lday/sh601318.day", errors: [{ record: 3, offset: 64, problem: "not_a_date", value: 20241340, message: "date 20241340 is not a YYYYMMDD date" }], bad_records: 1 }],
  last_date: 20241230,
  not_in_stock_list: 0,
  blocks: [{ name: "自选股", path: "/tdx/T0002/blocknew/ZXG.blk", status: "read", stocks: 2, added: 2, not_stocks: 1 }],
  watchlist_added: 2,
  industries: { status: "not_found" },
};

beforeEach(() => {
  // each case counts its own calls
  vi.clearAllMocks();
  steps = { data: "pending", model: "pending", watchlist: "pending", finished: false };
  contents = { ...fresh };
  mocks.firstRun.mockImplementation(() => Promise.resolve(ok(state())));
  mocks.setFirstRunStep.mockImplementation((step: keyof FirstRunSteps | null, st: "done" | "skipped" | "pending") => {
    if (step === null) steps.finished = st !== "pending";
    else (steps as Record<string, unknown>)[step] = st;
    return Promise.resolve(ok(state()));
  });
  mocks.fullSyncEstimate.mockResolvedValue(ok({ to_fetch: 5643, already_fresh: 0, seconds: 5643, offline: false }));
  mocks.importTdx.mockImplementation(() => {
    contents = { ...contents, stocks: 12, stocks_beyond_bundled: 4, newest_bar: 20241230, watchlist: 2 };
    return Promise.resolve(ok(report));
  });
  mocks.startTask.mockResolvedValue(ok({}));
});
afterEach(cleanup);

const type = (id: string, value: string) => fireEvent.change(document.getElementById(id)!, { target: { value } });
const click = (id: string) => fireEvent.click(document.getElementById(id)!);

describe("the guided start", () => {
  it("walks a fresh desk from a TDX import to the overview, saying what is there", async () => {
    render(
      <FirstRunGate onOpenSettings={() => {}}>
        <p id="overview">overview</p>
      </FirstRunGate>,
    );
    await screen.findByText("开始使用");
    // the guide sits above the overview
    expect(document.getElementById("overview")).toBeTruthy();
    // the full sync's estimate: 5,643 codes at ~1 s each
    await waitFor(() => expect(document.getElementById("fr-sync-estimate")?.textContent).toContain("1 小时 34 分钟"));
    type("fr-tdx-path", "/tdx");
    click("fr-tdx-import");
    await waitFor(() => expect(mocks.importTdx).toHaveBeenCalledWith("/tdx", expect.anything()));
    // the data step is done and its import still shown, damaged file named with its record
    await waitFor(() => expect(document.getElementById("fr-step-data")?.dataset.state).toBe("done"));
    const summary = document.getElementById("fr-tdx-summary")!.textContent!;
    expect(summary).toContain("读取 4 只股票：新增 1000 根K线");
    expect(summary).toContain("sh601318.day: #3 (byte 64): date 20241340 is not a YYYYMMDD date");
    expect(summary).toContain("自选股：2 只股票，新加入自选 2 只");
    click("fr-skip-model");
    await waitFor(() => expect(document.getElementById("fr-step-model")?.dataset.state).toBe("skipped"));
    expect(document.getElementById("fr-wl-count")?.textContent).toBe("自选股现有 2 只");
    // the watchlist from the same TDX folder (the path carried over)
    expect((document.getElementById("fr-wl-tdx-path") as HTMLInputElement).value).toBe("/tdx");
    click("fr-wl-tdx-import");
    await waitFor(() => expect(document.getElementById("fr-step-watchlist")?.dataset.state).toBe("done"));
    expect(document.getElementById("fr-summary")?.textContent).toBe(
      "桌面现有 12 只股票的日线（最新 2024-12-30），0 个指数，自选股 2 只，未配置模型（不影响使用）。",
    );
    click("fr-finish");
    await waitFor(() => expect(document.getElementById("first-run")).toBeNull());
    expect(document.getElementById("overview")).toBeTruthy();
    expect(document.getElementById("fr-desk-summary")?.textContent).toContain("12 只股票");
    expect(mocks.setFirstRunStep).toHaveBeenLastCalledWith(null, "done");
  });

  it("resumes at the first step still pending, and a bad watchlist file adds nothing and names its lines", async () => {
    steps = { data: "skipped", model: "done", watchlist: "pending", finished: false };
    mocks.importWatchlistFile.mockResolvedValue(ok({ path: "/w.csv", stocks: 1, added: 0, bad_lines: ["line 3: not a stock code"], bad_count: 1 }));
    render(
      <FirstRunGate onOpenSettings={() => {}}>
        <p>overview</p>
      </FirstRunGate>,
    );
    await screen.findByText("开始使用");
    expect(document.getElementById("fr-step-watchlist")?.dataset.open).toBe("true");
    expect(document.getElementById("fr-step-data")?.dataset.open).toBe("false");
    type("fr-wl-file-path", "/w.csv");
    click("fr-wl-file-import");
    await screen.findByText("line 3: not a stock code");
    expect(document.getElementById("fr-step-watchlist")?.dataset.state).toBe("pending");
    click("fr-skip-watchlist");
    await waitFor(() => expect(document.getElementById("fr-finish")).toBeTruthy());
  });

  it("is not shown on a desk that is not fresh, nor after it was finished", async () => {
    mocks.firstRun.mockResolvedValue(ok({ show: false, steps: { ...steps, finished: true }, contents: fresh }));
    render(
      <FirstRunGate onOpenSettings={() => {}}>
        <p>overview</p>
      </FirstRunGate>,
    );
    await screen.findByText("overview");
    expect(document.getElementById("first-run")).toBeNull();
    expect(document.getElementById("fr-desk-summary")).toBeNull();
  });

  it("names the industry file's bad lines of a TDX import in the page's language", async () => {
    const tdxhy = "/tdx/T0002/hq_cache/tdxhy.cfg";
    mocks.importTdx.mockResolvedValue(
      ok({
        ...report,
        rejected: [],
        industries: {
          status: "imported",
          report: {
            path: "/tdx",
            status: "rejected",
            bad_lines: 2,
            errors: [
              { file: tdxhy, line: 2, message: "market 7 is not 0, 1 or 2", problem: "bad_market", market: "7" },
              { file: "/tdx/T0002/hq_cache/block_gn.dat", line: 3, message: "empty name", problem: "empty_name" },
            ],
          },
        },
      }),
    );
    for (const [lang, want] of [
      ["zh", ["行业：未导入任何内容：2 行有错误", `${tdxhy} 第 2 行：市场字段 “7” 不是 0（深圳）、1（上海）或 2（北京）`, "/tdx/T0002/hq_cache/block_gn.dat 第 3 个板块：行业名称为空"]],
      ["en", ["Industries: Nothing imported: 2 bad lines", `${tdxhy} line 2: market “7” is not 0 (Shenzhen), 1 (Shanghai) or 2 (Beijing)`]],
    ] as const) {
      steps = { data: "pending", model: "pending", watchlist: "pending", finished: false };
      render(
        <LanguageContext.Provider value={lang}>
          <FirstRunGate onOpenSettings={() => {}}>
            <p>overview</p>
          </FirstRunGate>
        </LanguageContext.Provider>,
      );
      await waitFor(() => expect(document.getElementById("fr-tdx-path")).toBeTruthy());
      type("fr-tdx-path", "/tdx");
      click("fr-tdx-import");
      await waitFor(() => expect(document.getElementById("fr-tdx-summary")).toBeTruthy());
      const lines = [...document.querySelectorAll("#fr-tdx-summary li")].map((li) => li.textContent);
      for (const line of want) expect(lines).toContain(line);
      // never Rust's English message
      expect(lines.join("\n")).not.toContain("market 7 is not");
      cleanup();
    }
  });

  it("says in the page's language why a TDX install's industry files could not be read", async () => {
    mocks.importTdx.mockResolvedValue(
      ok({
        ...report,
        rejected: [],
        industries: {
          status: "failed",
          error: "/tdx/T0002/hq_cache/tdxhy.cfg: industry names come from incon.dat's #TDXNHY section, and no incon.dat was found",
          failure: { reason: "no_incon", tdxhy: "/tdx/T0002/hq_cache/tdxhy.cfg" },
        },
      }),
    );
    for (const [lang, want] of [
      ["zh", "行业未导入：/tdx/T0002/hq_cache/tdxhy.cfg 的行业名称在 incon.dat 的 #TDXNHY 段中，但没有找到 incon.dat"],
      ["en", "Industries not imported: /tdx/T0002/hq_cache/tdxhy.cfg takes its industry names from incon.dat's #TDXNHY section, and no incon.dat was found"],
    ] as const) {
      steps = { data: "pending", model: "pending", watchlist: "pending", finished: false };
      render(
        <LanguageContext.Provider value={lang}>
          <FirstRunGate onOpenSettings={() => {}}>
            <p>overview</p>
          </FirstRunGate>
        </LanguageContext.Provider>,
      );
      await waitFor(() => expect(document.getElementById("fr-tdx-path")).toBeTruthy());
      type("fr-tdx-path", "/tdx");
      click("fr-tdx-import");
      await waitFor(() => expect(document.getElementById("fr-tdx-summary")).toBeTruthy());
      const lines = [...document.querySelectorAll("#fr-tdx-summary li")].map((li) => li.textContent);
      expect(lines).toContain(want);
      cleanup();
    }
  });

  it("words every reason an industry path fails, in zh and en", () => {
    const failures: IndustriesFailure[] = [
      { reason: "unreadable", path: "/x", detail: "Permission denied (os error 13)" },
      { reason: "too_large", path: "/x", megabytes: 32 },
      { reason: "not_tdx_folder", path: "/x" },
      { reason: "no_incon", tdxhy: "/x/tdxhy.cfg" },
      { reason: "store", detail: "database is locked" },
    ];
    const zh = failures.map((f) => failureText(f, firstRunText("zh")));
    expect(zh).toEqual([
      "无法读取 /x（Permission denied (os error 13)）",
      "/x 超过 32 MB，不是行业文件",
      "/x 中没有通达信的行业文件（tdxhy.cfg、block_gn.dat）",
      "/x/tdxhy.cfg 的行业名称在 incon.dat 的 #TDXNHY 段中，但没有找到 incon.dat",
      "写入数据库失败（database is locked）",
    ]);
    const en = failures.map((f) => failureText(f, firstRunText("en")));
    expect(en[1]).toBe("/x is over 32 MB, no industry file");
    expect(en[2]).toBe("/x holds no TDX industry files (tdxhy.cfg, block_gn.dat)");
  });

  it("a full sync starts as a background task and completes the data step", async () => {
    render(
      <FirstRunGate onOpenSettings={() => {}}>
        <p>overview</p>
      </FirstRunGate>,
    );
    await screen.findByText("开始使用");
    await waitFor(() => expect(document.getElementById("fr-sync-estimate")).toBeTruthy());
    click("fr-sync-all");
    await waitFor(() => expect(mocks.startTask).toHaveBeenCalledWith({ type: "sync_all" }));
    await waitFor(() => expect(document.getElementById("fr-step-data")?.dataset.state).toBe("done"));
  });

  it("skips the data step without importing or syncing anything, and opens the model step", async () => {
    render(
      <FirstRunGate onOpenSettings={() => {}}>
        <p>overview</p>
      </FirstRunGate>,
    );
    await screen.findByText("开始使用");
    expect(document.getElementById("fr-step-data")?.dataset.open).toBe("true");
    click("fr-skip-data");
    await waitFor(() => expect(document.getElementById("fr-step-data")?.dataset.state).toBe("skipped"));
    expect(mocks.setFirstRunStep).toHaveBeenCalledWith("data", "skipped");
    expect(steps.data).toBe("skipped");
    expect(document.getElementById("fr-step-model")?.dataset.open).toBe("true");
    expect(document.getElementById("fr-tdx-path")).toBeNull();
    expect(mocks.importTdx).not.toHaveBeenCalled();
    expect(mocks.startTask).not.toHaveBeenCalled();
  });

  it("imports a CSV folder as a background task; a refused start says why and keeps the step open", async () => {
    mocks.startTask.mockResolvedValueOnce({ status: "error", error: { kind: "invalid_input", message: "/csv: no such folder" } });
    render(
      <FirstRunGate onOpenSettings={() => {}}>
        <p>overview</p>
      </FirstRunGate>,
    );
    await screen.findByText("开始使用");
    expect((document.getElementById("fr-csv-import") as HTMLButtonElement).disabled).toBe(true);
    type("fr-csv-path", "  /csv  ");
    click("fr-csv-import");
    await waitFor(() => expect(document.getElementById("fr-data-note")?.textContent).toBe("/csv: no such folder"));
    expect(mocks.startTask).toHaveBeenCalledWith({ type: "import", path: "/csv" });
    expect(document.getElementById("fr-step-data")?.dataset.state).toBe("pending");
    expect(mocks.setFirstRunStep).not.toHaveBeenCalled();
    // the folder is there now: the import starts and the data step is done
    click("fr-csv-import");
    await waitFor(() => expect(document.getElementById("fr-step-data")?.dataset.state).toBe("done"));
    expect(mocks.startTask).toHaveBeenCalledTimes(2);
    expect(mocks.startTask).toHaveBeenLastCalledWith({ type: "import", path: "/csv" });
    expect(mocks.setFirstRunStep).toHaveBeenCalledWith("data", "done");
  });

  it("the model step opens Settings, and once a model is set up it is marked done, not skipped", async () => {
    steps = { data: "done", model: "pending", watchlist: "pending", finished: false };
    const openSettings = vi.fn();
    render(
      <FirstRunGate onOpenSettings={openSettings}>
        <p>overview</p>
      </FirstRunGate>,
    );
    await screen.findByText("开始使用");
    expect(document.getElementById("fr-step-model")?.dataset.open).toBe("true");
    expect(document.getElementById("fr-skip-model")?.textContent).toBe("跳过");
    click("fr-open-settings");
    expect(openSettings).toHaveBeenCalledTimes(1);
    expect(mocks.setFirstRunStep).not.toHaveBeenCalled();
    cleanup();

    // back from Settings with a model: the guide mounts again and reads the desk anew
    contents = { ...contents, model: "deepseek/deepseek-chat" };
    render(
      <FirstRunGate onOpenSettings={openSettings}>
        <p>overview</p>
      </FirstRunGate>,
    );
    await screen.findByText("已配置模型：deepseek/deepseek-chat");
    expect(document.getElementById("fr-step-model")?.dataset.open).toBe("true");
    expect(document.getElementById("fr-skip-model")?.textContent).toBe("已完成");
    click("fr-skip-model");
    await waitFor(() => expect(document.getElementById("fr-step-model")?.dataset.state).toBe("done"));
    expect(mocks.setFirstRunStep).toHaveBeenCalledWith("model", "done");
    expect(document.getElementById("fr-step-watchlist")?.dataset.open).toBe("true");
  });
});
