import { describe, expect, it, vi, beforeEach } from "vitest";
import { render, screen, fireEvent, waitFor, cleanup } from "@testing-library/react";
import type { KeyStatus, KeysReport } from "../bindings";

const anthropicUnset: KeyStatus = { id: { kind: "provider", vendor: "anthropic" }, set: false, source: null, env_var: "ANTHROPIC_API_KEY" };
const tushareEnv: KeyStatus = { id: { kind: "data_source", source: "tushare" }, set: true, source: "environment", env_var: "TUSHARE_TOKEN" };

const mocks = vi.hoisted(() => ({
  keyStatuses: vi.fn(),
  setKey: vi.fn(),
  deleteKey: vi.fn(),
}));
vi.mock("../bindings", () => ({ commands: mocks }));

import KeysPanel from "./KeysPanel";

function report(keychain: KeysReport["keychain"], keys: KeyStatus[]) {
  return { status: "ok", data: { keychain, keys } };
}

describe("KeysPanel", () => {
  beforeEach(() => {
    cleanup();
    vi.clearAllMocks();
  });

  it("shows where each key comes from and never the value", async () => {
    mocks.keyStatuses.mockResolvedValue(report({ state: "available" }, [anthropicUnset, tushareEnv]));
    mocks.setKey.mockResolvedValue({ status: "ok", data: { ...anthropicUnset, set: true, source: "keychain" } });
    render(<KeysPanel />);
    const status = await screen.findByText("未设置");
    expect(status.id).toBe("key-status-anthropic");
    expect(document.getElementById("key-status-tushare")?.textContent).toBe("已设置 · 环境变量");
    // An environment key cannot be deleted from the app.
    expect(document.getElementById("key-delete-tushare")).toBeNull();

    const input = document.getElementById("key-input-anthropic") as HTMLInputElement;
    expect(input.type).toBe("password");
    fireEvent.change(input, { target: { value: "sk-ant-secret-value" } });
    fireEvent.click(document.getElementById("key-save-anthropic") as HTMLButtonElement);
    await waitFor(() => expect(document.getElementById("key-status-anthropic")?.dataset.set).toBe("true"));
    expect(mocks.setKey).toHaveBeenCalledWith({ kind: "provider", vendor: "anthropic" }, "sk-ant-secret-value", false);
    expect(input.value).toBe("");
    expect(document.body.innerHTML).not.toContain("sk-ant-secret-value");
  });

  it("explains a missing keychain and defaults to session-only storage", async () => {
    mocks.keyStatuses.mockResolvedValue(report({ state: "unavailable", reason: "no Secret Service", fix: "install gnome-keyring" }, [anthropicUnset]));
    mocks.setKey.mockResolvedValue({ status: "ok", data: { ...anthropicUnset, set: true, source: "session" } });
    render(<KeysPanel />);
    expect(await screen.findByText("无法访问系统钥匙串")).toBeTruthy();
    expect(screen.getByText("install gnome-keyring")).toBeTruthy();
    fireEvent.change(document.getElementById("key-input-anthropic") as HTMLInputElement, { target: { value: "sk-x" } });
    fireEvent.click(document.getElementById("key-save-anthropic") as HTMLButtonElement);
    await waitFor(() => expect(mocks.setKey).toHaveBeenCalledWith(anthropicUnset.id, "sk-x", true));
    expect(await screen.findByText("已设置 · 仅本次会话")).toBeTruthy();
  });

  it("shows the keychain's error when saving fails", async () => {
    mocks.keyStatuses.mockResolvedValue(report({ state: "available" }, [anthropicUnset]));
    mocks.setKey.mockResolvedValue({ status: "error", error: { type: "keychain", reason: "IsLocked" } });
    render(<KeysPanel />);
    await screen.findByText("未设置");
    fireEvent.change(document.getElementById("key-input-anthropic") as HTMLInputElement, { target: { value: "sk-y" } });
    fireEvent.click(document.getElementById("key-save-anthropic") as HTMLButtonElement);
    expect((await screen.findByRole("alert")).textContent).toBe("IsLocked");
    expect(document.getElementById("key-status-anthropic")?.dataset.set).toBe("false");
  });
});
