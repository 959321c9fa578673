import { describe, expect, it, vi, beforeEach } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { UpdateCheck, UpdateProgress } from "../bindings";

const mocks = vi.hoisted(() => ({
  appInfo: vi.fn(),
  checkForUpdate: vi.fn(),
  installUpdate: vi.fn(),
  restartApp: vi.fn(),
}));
vi.mock("../bindings", () => ({ commands: mocks }));
vi.mock("@tauri-apps/api/core", () => ({
  Channel: class {
    onmessage: (p: UpdateProgress) => void = () => {};
  },
}));

import UpdatePanel from "./UpdatePanel";

const available: UpdateCheck = {
  current_version: "0.1.0",
  server_configured: true,
  can_install: true,
  install_note: null,
  available: { version: "0.2.0", notes: "更快的同步\n<b>not markup</b>", date: "2026-12-01T08:00:00Z" },
};

describe("UpdatePanel", () => {
  beforeEach(() => {
    cleanup();
    vi.clearAllMocks();
    mocks.appInfo.mockResolvedValue({ version: "0.1.0", data_home: "", settings_path: "", logs_dir: "" });
  });

  it("shows the new version and its notes as text, reports progress and offers a restart once installed", async () => {
    mocks.checkForUpdate.mockResolvedValue({ status: "ok", data: available });
    let finish: (v: unknown) => void = () => {};
    mocks.installUpdate.mockImplementation((_version: string, channel: { onmessage: (p: UpdateProgress) => void }) => {
      channel.onmessage({ type: "downloading", downloaded: 3 * 1024 * 1024, total: 6 * 1024 * 1024 });
      return new Promise((resolve) => (finish = resolve));
    });
    render(<UpdatePanel />);
    expect(await screen.findByText("当前版本 0.1.0")).toBeTruthy();
    fireEvent.click(screen.getByText("检查更新"));
    expect(await screen.findByText("有新版本 0.2.0")).toBeTruthy();
    const notes = document.getElementById("update-notes");
    expect(notes?.textContent).toBe("更快的同步\n<b>not markup</b>");
    expect(notes?.querySelector("b")).toBeNull();
    fireEvent.click(screen.getByText("下载并安装"));
    await waitFor(() => expect(mocks.installUpdate).toHaveBeenCalledWith("0.2.0", expect.anything()));
    expect(await screen.findByText("正在下载… 3.0 MB / 6.0 MB")).toBeTruthy();
    finish({ status: "ok", data: { type: "installed", version: "0.2.0" } });
    expect(await screen.findByText("版本 0.2.0 已安装，重启后生效。")).toBeTruthy();
    fireEvent.click(screen.getByText("立即重启"));
    expect(mocks.restartApp).toHaveBeenCalled();
  });

  it("says plainly that a download with a bad signature was refused", async () => {
    mocks.checkForUpdate.mockResolvedValue({ status: "ok", data: available });
    mocks.installUpdate.mockResolvedValue({
      status: "ok",
      data: { type: "refused", version: "0.2.0", why: { type: "bad_signature" }, reason: "the download's signature does not verify" },
    });
    render(<UpdatePanel />);
    fireEvent.click(await screen.findByText("检查更新"));
    fireEvent.click(await screen.findByText("下载并安装"));
    const refused = await screen.findByRole("alert");
    expect(refused.textContent).toBe("已拒绝版本 0.2.0：下载的文件与签名不符（可能被篡改，或不是用本项目的密钥签名的），没有安装。当前版本继续运行。");
    // the English detail stays at hand for a bug report
    expect(refused.getAttribute("title")).toBe("the download's signature does not verify");
    expect(screen.queryByText("立即重启")).toBeNull();
  });

  it("is up to date, or cannot install outside the AppImage, or names the failure", async () => {
    mocks.checkForUpdate
      .mockResolvedValueOnce({ status: "ok", data: { ...available, available: null } })
      .mockResolvedValueOnce({ status: "ok", data: { ...available, server_configured: false, available: null } })
      .mockResolvedValueOnce({ status: "ok", data: { ...available, can_install: false, install_note: "update it with apt" } })
      .mockResolvedValueOnce({ status: "error", error: { kind: "unavailable", message: "could not reach the update server: dns", code: null } });
    render(<UpdatePanel />);
    fireEvent.click(await screen.findByText("检查更新"));
    expect(await screen.findByText("已是最新版本。")).toBeTruthy();
    fireEvent.click(screen.getByText("检查更新"));
    expect(await screen.findByText("这个版本没有配置更新服务器（发布时设定），所以没有检查。")).toBeTruthy();
    fireEvent.click(screen.getByText("检查更新"));
    expect(await screen.findByText("这份安装不能自动更新：update it with apt")).toBeTruthy();
    expect(screen.queryByText("下载并安装")).toBeNull();
    fireEvent.click(screen.getByText("检查更新"));
    expect(await screen.findByText("没有完成：could not reach the update server: dns")).toBeTruthy();
    expect(mocks.installUpdate).not.toHaveBeenCalled();
  });
});
