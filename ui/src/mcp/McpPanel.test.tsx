import { beforeEach, describe, expect, it, vi } from "vitest";
import { act, cleanup, fireEvent, render, waitFor } from "@testing-library/react";
import type { McpServerView } from "../bindings";

const mocks = vi.hoisted(() => ({
  mcpServers: vi.fn(),
  mcpAdd: vi.fn(),
  mcpSetEnabled: vi.fn(),
  mcpSetAlwaysAsk: vi.fn(),
  mcpRemove: vi.fn(),
  mcpTest: vi.fn(),
}));
vi.mock("../bindings", () => ({ commands: mocks }));

import McpPanel, { errorText, mcpText, splitArgs, statusText } from "./McpPanel";

const ok = <T,>(data: T) => ({ status: "ok", data });
const time: McpServerView = { name: "time", kind: "stdio", target: "mcp-server-time --local-timezone Asia/Shanghai", enabled: true, always_ask: false, trusted_tools: [], status: null };
const q = (c: HTMLElement, sel: string) => c.querySelector(sel) as HTMLElement;

describe("Settings → MCP", () => {
  beforeEach(() => {
    cleanup();
    vi.clearAllMocks();
    mocks.mcpServers.mockResolvedValue(ok([time]));
  });

  it("splits arguments and words errors", () => {
    expect(splitArgs("  --local-timezone   Asia/Shanghai ")).toEqual(["--local-timezone", "Asia/Shanghai"]);
    const en = mcpText("en");
    expect(errorText({ type: "failed", message: "MCP server 'x' did not answer within 20 s" }, en)).toBe("Connection failed: MCP server 'x' did not answer within 20 s");
    expect(errorText({ type: "invalid", message: "name is invalid" }, en)).toBe("Not saved: name is invalid");
  });

  it("says how a server stands in this run", () => {
    const en = mcpText("en");
    const st = (p: Partial<NonNullable<McpServerView["status"]>>) => ({ connected: false, tools: null, last_error: null, disabled: null, ...p });
    expect(statusText(null, en)).toBe("not used by this run yet");
    expect(statusText(st({ connected: true, tools: 2 }), en)).toBe("connected · 2 tools");
    expect(statusText(st({ last_error: "died" }), en)).toBe("last error: died");
    // Back up after an error: connected wins.
    expect(statusText(st({ connected: true, tools: 2, last_error: "died" }), en)).toBe("connected · 2 tools");
    expect(statusText(st({ disabled: "3 failures in a row" }), en)).toBe("disabled: 3 failures in a row");
  });

  it("adds a stdio server with its arguments", async () => {
    mocks.mcpAdd.mockResolvedValue(ok([time, { ...time, name: "self", target: "wyckoff mcp serve" }]));
    const { container } = render(<McpPanel />);
    await waitFor(() => expect(q(container, ".mcp-server")).not.toBeNull());
    fireEvent.change(q(container, "#mcp-name"), { target: { value: "self" } });
    fireEvent.change(q(container, "#mcp-target"), { target: { value: "wyckoff" } });
    fireEvent.change(q(container, "#mcp-args"), { target: { value: "mcp serve" } });
    await act(async () => {
      fireEvent.submit(q(container, "#mcp-form"));
    });
    expect(mocks.mcpAdd).toHaveBeenCalledWith("self", "wyckoff", ["mcp", "serve"]);
    expect(container.querySelectorAll(".mcp-server")).toHaveLength(2);
    expect(q(container, "#mcp-note").textContent).toBe("已添加「self」");
  });

  it("tests a server: its tools with which run unasked, or why it failed", async () => {
    mocks.mcpTest
      .mockResolvedValueOnce(ok({ name: "mcp-time", version: "1.0", tools: [{ name: "get_current_time", description: null, read_only: true }, { name: "convert_time", description: null, read_only: false }] }))
      .mockResolvedValueOnce({ status: "error", error: { type: "failed", message: "MCP server 'time' did not answer within 20 s" } });
    const { container } = render(<McpPanel />);
    await waitFor(() => expect(q(container, ".mcp-test")).not.toBeNull());
    await act(async () => {
      fireEvent.click(q(container, ".mcp-test"));
    });
    expect(q(container, ".mcp-report").textContent).toContain("mcp-time 1.0：2 个工具");
    expect(q(container, ".mcp-tool[data-tool='get_current_time']").dataset.readOnly).toBe("true");
    expect(q(container, ".mcp-tool[data-tool='convert_time'] .badge").textContent).toBe("需批准");
    await act(async () => {
      fireEvent.click(q(container, ".mcp-test"));
    });
    expect(q(container, ".mcp-report.error").textContent).toBe("连接失败：MCP server 'time' did not answer within 20 s");
  });
});
