import { describe, expect, it, vi, beforeEach } from "vitest";
import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { UpdateCheck, UpdateProgress } from "../bindings";

const mocks = vi.hoisted(() => ({
  appInfo: vi.fn(),
  checkForUpdate: vi.fn(),
  installUpdate: vi.fn(),
  restartApp: vi.fn(),
  pendingUpdate: vi.fn(),
  found: null as null | ((e: { payload: { check: UpdateCheck } }) => void),
  unlistened: 0,
}));
vi.mock("../bindings", () => ({
  commands: mocks,
  events: {
    updateFound: {
      listen: (f: (e: { payload: { check: UpdateCheck } }) => void) => {
        mocks.found = f;
        return Promise.resolve(() => {
          mocks.unlistened += 1;
        });
      },
    },
  },
}));
vi.mock("@tauri-apps/api/core", () => ({
  Channel: class {
    onmessage: (p: UpdateProgress) => void = () => {};
  },
}));

import UpdateIndicator from "./UpdateIndicator";
import AutoCheckField from "./AutoCheckField";

const check = (version: string): UpdateCheck => ({
  current_version: "0.1.0",
  server_configured: true,
  can_install: true,
  install_note: null,
  available: { version, notes: `新版本 ${version} 的说明`, date: "2026-12-01T08:00:00Z" },
});

describe("UpdateIndicator", () => {
  beforeEach(() => {
    cleanup();
    vi.clearAllMocks();
    mocks.found = null;
    mocks.unlistened = 0;
    mocks.appInfo.mockResolvedValue({ version: "0.1.0", data_home: "", settings_path: "", logs_dir: "" });
  });

  it("shows nothing until a check finds a newer version, then names it and opens its notes and install button", async () => {
    mocks.pendingUpdate.mockResolvedValue(null);
    render(<UpdateIndicator />);
    await waitFor(() => expect(mocks.pendingUpdate).toHaveBeenCalled());
    expect(document.getElementById("update-indicator")).toBeNull();

    act(() => mocks.found?.({ payload: { check: check("0.2.0") } }));
    const button = await screen.findByText("新版本 0.2.0 可用");
    expect(document.getElementById("update-dialog")).toBeNull();
    fireEvent.click(button);
    const dialog = await screen.findByRole("dialog");
    expect(dialog.textContent).toContain("有新版本 0.2.0");
    expect(document.getElementById("update-notes")?.textContent).toBe("新版本 0.2.0 的说明");
    // the same panel as Settings: the install waits for the click, and the check was not asked again
    expect(screen.getByText("下载并安装")).toBeTruthy();
    expect(mocks.checkForUpdate).not.toHaveBeenCalled();
    expect(mocks.installUpdate).not.toHaveBeenCalled();

    mocks.installUpdate.mockResolvedValue({ status: "ok", data: { type: "installed", version: "0.2.0" } });
    fireEvent.click(screen.getByText("下载并安装"));
    await waitFor(() => expect(mocks.installUpdate).toHaveBeenCalledWith("0.2.0", expect.anything()));
    expect(await screen.findByText("版本 0.2.0 已安装，重启后生效。")).toBeTruthy();

    fireEvent.click(screen.getByText("关闭"));
    expect(screen.queryByRole("dialog")).toBeNull();
    expect(screen.getByText("新版本 0.2.0 可用")).toBeTruthy();
  });

  it("shows what a check found before the window opened, and a later version over it", async () => {
    mocks.pendingUpdate.mockResolvedValue(check("0.2.0"));
    const { unmount } = render(<UpdateIndicator />);
    expect(await screen.findByText("新版本 0.2.0 可用")).toBeTruthy();
    act(() => mocks.found?.({ payload: { check: check("0.3.0") } }));
    expect(await screen.findByText("新版本 0.3.0 可用")).toBeTruthy();
    unmount();
    await waitFor(() => expect(mocks.unlistened).toBe(1));
  });

  it("stays hidden when the check found nothing newer", async () => {
    mocks.pendingUpdate.mockResolvedValue({ ...check("0.2.0"), available: null });
    render(<UpdateIndicator />);
    await waitFor(() => expect(mocks.pendingUpdate).toHaveBeenCalled());
    await act(async () => {});
    expect(document.getElementById("update-indicator")).toBeNull();
  });
});

describe("AutoCheckField", () => {
  beforeEach(() => cleanup());

  it("shows the setting and reports the change", () => {
    const onChange = vi.fn();
    render(<AutoCheckField value={true} onChange={onChange} />);
    const box = document.getElementById("set-check-for-updates") as HTMLInputElement;
    expect(box.checked).toBe(true);
    expect(screen.getByText(/自动检查更新/)).toBeTruthy();
    fireEvent.click(box);
    expect(onChange).toHaveBeenCalledWith(false);
  });
});
