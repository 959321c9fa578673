import { describe, expect, it, vi, beforeEach } from "vitest";
import { act, cleanup, fireEvent, render, waitFor } from "@testing-library/react";
import type { Settings } from "../bindings";

const mocks = vi.hoisted(() => ({
  updateSettings: vi.fn(),
  keyStatuses: vi.fn(),
  testConnection: vi.fn(),
  listSkills: vi.fn(),
  openSkillsFolder: vi.fn(),
  listSchedules: vi.fn(),
  damagedSchedules: vi.fn(),
  pushChannels: vi.fn(),
  mcpServers: vi.fn(),
  botsView: vi.fn(),
  appInfo: vi.fn(() => Promise.resolve({ version: "0.1.0", data_home: "", settings_path: "", logs_dir: "" })),
}));
vi.mock("../bindings", () => ({ commands: mocks, events: { scheduleRan: { listen: () => Promise.resolve(() => {}) } } }));

import SettingsPage from "./Settings";
import { riskFixture } from "../risk/fixtures";

const settings: Settings = {
  version: 1,
  risk: riskFixture,
  language: "zh",
  theme: "system",
  close_to_tray: false,
  notifications: true,
  models: [
    { id: "ds", provider: "deepseek", model: "deepseek-chat", base_url: null, context_window: null, input_price_per_mtok: null, output_price_per_mtok: null },
    { id: "qw", provider: "qwen", model: "qwen-turbo", base_url: null, context_window: null, input_price_per_mtok: null, output_price_per_mtok: null },
  ],
  main_model: "ds",
  light_model: null,
  fallback_models: [],
  stream_idle_timeout_secs: 60,
  tool_timeout_secs: 60,
  approval_timeout_secs: 120,
  proxy: null,
  data_sources: [],
  allow_private_web_fetch: false,
  file_roots: [],
  retention_days: 30,
  intraday_alert_minutes: 5,
  check_for_updates: true,
};

describe("Settings page", () => {
  beforeEach(() => {
    cleanup();
    vi.clearAllMocks();
    mocks.keyStatuses.mockResolvedValue({ status: "ok", data: { keychain: { state: "available" }, keys: [] } });
    mocks.listSchedules.mockResolvedValue({ status: "ok", data: [] });
    mocks.damagedSchedules.mockResolvedValue({ status: "ok", data: [] });
    mocks.pushChannels.mockResolvedValue({ status: "ok", data: [] });
    mocks.mcpServers.mockResolvedValue({ status: "ok", data: [] });
    mocks.botsView.mockResolvedValue({ status: "ok", data: { bots: [], pending: [] } });
    mocks.updateSettings.mockImplementation(async (s: Settings) => ({ status: "ok", data: s }));
    mocks.listSkills.mockResolvedValue({
      status: "ok",
      data: {
        dir: "/h/skills",
        skills: [
          { name: "checkup", description: "持仓全面体检，综合诊断建议", origin: { type: "user", path: "/h/skills/checkup.md" } },
          { name: "screen", description: "全市场扫描", origin: { type: "builtin" } },
        ],
        warnings: [{ path: "/h/skills/broken.md", message: "front matter is not valid: line 2" }],
      },
    });
  });

  it("saves the light model, fallbacks and context windows", async () => {
    const onSaved = vi.fn();
    render(<SettingsPage view={{ settings, problem: null, migration_notes: [] }} onSaved={onSaved} onAsk={() => {}} />);
    fireEvent.change(document.getElementById("set-light-model") as HTMLSelectElement, { target: { value: "qw" } });
    fireEvent.change(document.getElementById("fallback-add") as HTMLSelectElement, { target: { value: "qw" } });
    fireEvent.change(document.getElementById("model-context-ds") as HTMLInputElement, { target: { value: "64000" } });
    await act(async () => fireEvent.click(document.getElementById("settings-save") as HTMLButtonElement));
    expect(mocks.updateSettings).toHaveBeenCalledTimes(1);
    const saved = mocks.updateSettings.mock.calls[0][0] as Settings;
    expect(saved).toMatchObject({ light_model: "qw", fallback_models: ["qw"], main_model: "ds" });
    expect(saved.models[0].context_window).toBe(64000);
    expect(document.getElementById("settings-message")?.textContent).toBe("已保存");
  });

  it("does not save while a context window is invalid", async () => {
    render(<SettingsPage view={{ settings, problem: null, migration_notes: [] }} onSaved={() => {}} onAsk={() => {}} />);
    fireEvent.change(document.getElementById("model-context-qw") as HTMLInputElement, { target: { value: "-1" } });
    await act(async () => fireEvent.click(document.getElementById("settings-save") as HTMLButtonElement));
    expect(mocks.updateSettings).not.toHaveBeenCalled();
    expect(document.getElementById("settings-message")?.textContent).toBe("qw: 上下文窗口必须是正整数（留空为自动）");
  });
  it("saves the file-tool folders one per line and the private-address switch", async () => {
    render(<SettingsPage view={{ settings, problem: null, migration_notes: [] }} onSaved={() => {}} onAsk={() => {}} />);
    fireEvent.change(document.getElementById("set-file-roots") as HTMLTextAreaElement, {
      target: { value: "/home/me/research\n\n  /mnt/notes  \n" },
    });
    fireEvent.click(document.getElementById("set-allow-private-fetch") as HTMLInputElement);
    await act(async () => fireEvent.click(document.getElementById("settings-save") as HTMLButtonElement));
    const saved = mocks.updateSettings.mock.calls[0][0] as Settings;
    expect(saved.file_roots).toEqual(["/home/me/research", "/mnt/notes"]);
    expect(saved.allow_private_web_fetch).toBe(true);
  });

  it("shows the backend's reason when a folder is refused", async () => {
    mocks.updateSettings.mockResolvedValue({
      status: "error",
      error: { type: "invalid", field: "file_roots: 'notes'", reason: "use an absolute path" },
    });
    render(<SettingsPage view={{ settings, problem: null, migration_notes: [] }} onSaved={() => {}} onAsk={() => {}} />);
    fireEvent.change(document.getElementById("set-file-roots") as HTMLTextAreaElement, { target: { value: "notes" } });
    await act(async () => fireEvent.click(document.getElementById("settings-save") as HTMLButtonElement));
    expect(document.getElementById("settings-message")?.textContent).toContain("use an absolute path");
    expect(document.getElementById("settings-message")?.textContent).toContain("file_roots: 'notes'");
  });
  it("saves the sizing and account limits with the rest of the form", async () => {
    render(<SettingsPage view={{ settings, problem: null, migration_notes: [] }} onSaved={() => {}} onAsk={() => {}} />);
    expect((document.getElementById("set-risk-risk_per_trade_pct") as HTMLInputElement).value).toBe("1");
    expect((document.getElementById("set-risk-max_positions") as HTMLInputElement).value).toBe("8");
    fireEvent.change(document.getElementById("set-risk-max_positions") as HTMLInputElement, { target: { value: "3" } });
    fireEvent.change(document.getElementById("set-risk-drawdown_brake_pct") as HTMLInputElement, { target: { value: "10" } });
    fireEvent.change(document.getElementById("set-risk-risk_per_trade_pct") as HTMLInputElement, { target: { value: "0.5" } });
    await act(async () => fireEvent.click(document.getElementById("settings-save") as HTMLButtonElement));
    expect(mocks.updateSettings).toHaveBeenCalledTimes(1);
    const saved = mocks.updateSettings.mock.calls[0][0] as Settings;
    expect(saved.risk).toEqual({ ...riskFixture, max_positions: 3, drawdown_brake_pct: 10, risk_per_trade_pct: 0.5 });
    expect(document.getElementById("settings-message")?.textContent).toBe("已保存");
  });

  it("shows the backend's refusal of a risk limit, naming the field", async () => {
    mocks.updateSettings.mockResolvedValue({
      status: "error",
      error: { type: "invalid", field: "risk.max_heat_pct", reason: "must be a percent between 0 and 100 (0 turns it off) (got 120)" },
    });
    render(<SettingsPage view={{ settings, problem: null, migration_notes: [] }} onSaved={() => {}} onAsk={() => {}} />);
    fireEvent.change(document.getElementById("set-risk-max_heat_pct") as HTMLInputElement, { target: { value: "120" } });
    await act(async () => fireEvent.click(document.getElementById("settings-save") as HTMLButtonElement));
    expect((mocks.updateSettings.mock.calls[0][0] as Settings).risk.max_heat_pct).toBe(120);
    const said = document.getElementById("settings-message")?.textContent ?? "";
    expect(said).toContain("risk.max_heat_pct");
    expect(said).toContain("between 0 and 100");
  });

  it("saves the intraday alert interval from the alerts section", async () => {
    render(<SettingsPage view={{ settings, problem: null, migration_notes: [] }} onSaved={() => {}} onAsk={() => {}} />);
    const field = document.getElementById("set-intraday-minutes") as HTMLInputElement;
    expect(field.value).toBe("5");
    expect(document.getElementById("settings-alerts")?.textContent).toContain("盘中检查间隔（分钟，1–60）");
    fireEvent.change(field, { target: { value: "15" } });
    expect(document.getElementById("set-intraday-minutes-problem")).toBeNull();
    await act(async () => fireEvent.click(document.getElementById("settings-save") as HTMLButtonElement));
    const saved = mocks.updateSettings.mock.calls[0][0] as Settings;
    expect(saved.intraday_alert_minutes).toBe(15);
  });

  it("marks an interval outside 1–60 minutes and shows the backend's refusal naming the field", async () => {
    mocks.updateSettings.mockResolvedValue({
      status: "error",
      error: { type: "out_of_range", field: "intraday_alert_minutes", min: 1, max: 60, got: 0 },
    });
    render(<SettingsPage view={{ settings, problem: null, migration_notes: [] }} onSaved={() => {}} onAsk={() => {}} />);
    const field = document.getElementById("set-intraday-minutes") as HTMLInputElement;
    for (const bad of ["0", "61", "2.5"]) {
      fireEvent.change(field, { target: { value: bad } });
      expect(document.getElementById("set-intraday-minutes-problem")?.textContent, bad).toBe("盘中检查间隔须为 1–60 的整数分钟");
      expect(field.getAttribute("aria-invalid"), bad).toBe("true");
    }
    fireEvent.change(field, { target: { value: "60" } });
    expect(document.getElementById("set-intraday-minutes-problem")).toBeNull();
    fireEvent.change(field, { target: { value: "0" } });
    await act(async () => fireEvent.click(document.getElementById("settings-save") as HTMLButtonElement));
    expect((mocks.updateSettings.mock.calls[0][0] as Settings).intraday_alert_minutes).toBe(0);
    const said = document.getElementById("settings-message")?.textContent ?? "";
    expect(said).toContain("intraday_alert_minutes");
    expect(said).toContain("60");
  });

  it("lists the skills with their origin, names each skipped file and opens the folder", async () => {
    mocks.openSkillsFolder.mockResolvedValue({ status: "ok", data: "/h/skills" });
    render(<SettingsPage view={{ settings, problem: null, migration_notes: [] }} onSaved={() => {}} onAsk={() => {}} />);
    await waitFor(() => expect(document.querySelectorAll("#skills-panel li[data-skill]")).toHaveLength(2));
    const checkup = document.querySelector("#skills-panel li[data-skill=checkup]") as HTMLElement;
    expect(checkup.dataset.origin).toBe("user");
    expect(checkup.textContent).toContain("/h/skills/checkup.md");
    expect(document.querySelector("#skills-panel li[data-skill=screen]")?.textContent).toContain("内置");
    expect(document.querySelector("#skills-warnings li[data-path='/h/skills/broken.md']")?.textContent).toBe(
      "/h/skills/broken.md: front matter is not valid: line 2",
    );
    expect(document.getElementById("skills-dir")?.textContent).toBe("/h/skills");
    await act(async () => fireEvent.click(document.getElementById("skills-open-folder") as HTMLButtonElement));
    expect(mocks.openSkillsFolder).toHaveBeenCalledTimes(1);
    expect(document.getElementById("skills-note")?.textContent).toBe("技能文件夹: /h/skills");
    expect(mocks.listSkills).toHaveBeenCalledTimes(2);
  });
});
