import { beforeEach, describe, expect, it, vi } from "vitest";
import { act, cleanup, fireEvent, render, waitFor } from "@testing-library/react";
import type { McpServerView } from "../bindings";

const mocks = vi.hoisted(() => ({
  mcpServers: vi.fn(),
  mcpAdd: vi.fn(),
  mcpSetEnabled: vi.fn(),
  mcpSetAlwaysAsk: vi.fn(),
  mcpSetTrusted: vi.fn(),
  mcpRemove: vi.fn(),
  mcpTest: vi.fn(),
  mcpPickTools: vi.fn(),
  mcpSetMaxTools: vi.fn(),
}));
vi.mock("../bindings", () => ({ commands: mocks }));

import McpPanel, { errorText, leftOutText, mcpText, nextPick, splitArgs, statusText } from "./McpPanel";

const ok = <T,>(data: T) => ({ status: "ok", data });
const time: McpServerView = { name: "time", kind: "stdio", target: "mcp-server-time --local-timezone Asia/Shanghai", enabled: true, always_ask: false, trusted_tools: [], max_tools: 40, offered_tools: null, secrets: [], status: null };
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
    expect(errorText({ kind: "unavailable", message: "MCP server 'x' did not answer within 20 s", code: null }, en)).toBe("Connection failed: MCP server 'x' did not answer within 20 s");
    expect(errorText({ kind: "invalid_input", message: "name is invalid", code: null }, en)).toBe("Not saved: name is invalid");
  });

  it("says how a server stands in this run", () => {
    const en = mcpText("en");
    const st = (p: Partial<NonNullable<McpServerView["status"]>>) => ({ connected: false, tools: null, last_error: null, disabled: null, offered: 0, left_out: [], ...p });
    expect(statusText(null, en)).toBe("not used by this run yet");
    expect(statusText(st({ connected: true, tools: 2, offered: 2 }), en)).toBe("connected · 2 tools");
    // a cap: how many the model is offered, and what is left out with why
    const capped = st({ connected: true, tools: 8, offered: 1, left_out: Array.from({ length: 7 }, (_, i) => ({ tool: `t${i + 2}`, why: "over the server's cap of 1 tools" })) });
    expect(statusText(capped, en)).toBe("connected · 8 tools, 1 offered to the model");
    expect(leftOutText(capped, en)).toBe(
      "Left out of the model's requests: t2 (over the server's cap of 1 tools), t3 (over the server's cap of 1 tools), t4 (over the server's cap of 1 tools), t5 (over the server's cap of 1 tools), t6 (over the server's cap of 1 tools), and 2 more",
    );
    expect(leftOutText(st({ connected: true, tools: 2, offered: 2 }), en)).toBeNull();
    expect(statusText(st({ last_error: "died" }), en)).toBe("last error: died");
    // Back up after an error: connected wins.
    expect(statusText(st({ connected: true, tools: 2, offered: 2, last_error: "died" }), en)).toBe("connected · 2 tools");
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
    expect(mocks.mcpAdd).toHaveBeenCalledWith("self", "wyckoff", ["mcp", "serve"], [], null);
    expect(container.querySelectorAll(".mcp-server")).toHaveLength(2);
    expect(q(container, "#mcp-note").textContent).toBe("已添加「self」");
  });

  it("tests a server: its tools with which run unasked, or why it failed", async () => {
    mocks.mcpTest
      .mockResolvedValueOnce(ok({ name: "mcp-time", version: "1.0", tools: [{ name: "get_current_time", description: null, read_only: true }, { name: "convert_time", description: null, read_only: false }] }))
      .mockResolvedValueOnce({ status: "error", error: { kind: "unavailable", message: "MCP server 'time' did not answer within 20 s", code: null } });
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

  it("adds a stdio server with environment variables from named secrets", async () => {
    const gh: McpServerView = { ...time, name: "gh", target: "npx -y server-github", secrets: [{ name: "gh-token", into: "GITHUB_TOKEN", set: true }, { name: "other", into: "OTHER", set: false }] };
    mocks.mcpAdd.mockResolvedValue(ok([time, gh]));
    const { container } = render(<McpPanel />);
    await waitFor(() => expect(q(container, ".mcp-server")).not.toBeNull());
    fireEvent.change(q(container, "#mcp-name"), { target: { value: "gh" } });
    fireEvent.change(q(container, "#mcp-target"), { target: { value: "npx" } });
    fireEvent.change(q(container, "#mcp-args"), { target: { value: "-y server-github" } });
    expect(q(container, "#mcp-header-secret")).toBeNull();
    fireEvent.click(q(container, "#mcp-env-add"));
    fireEvent.click(q(container, "#mcp-env-add"));
    fireEvent.click(q(container, "#mcp-env-add"));
    const rows = container.querySelectorAll(".mcp-env-row");
    const set = (row: Element, sel: string, value: string) => fireEvent.change(row.querySelector(sel) as HTMLElement, { target: { value } });
    set(rows[0], ".mcp-env-var", "GITHUB_TOKEN");
    set(rows[0], ".mcp-env-secret", "gh-token");
    set(rows[0], ".mcp-env-value", "ghp_secret");
    expect((rows[0].querySelector(".mcp-env-value") as HTMLInputElement).type).toBe("password");
    set(rows[1], ".mcp-env-var", "OTHER");
    set(rows[1], ".mcp-env-secret", "other");
    // the third row stays blank and is not sent
    await act(async () => {
      fireEvent.submit(q(container, "#mcp-form"));
    });
    expect(mocks.mcpAdd).toHaveBeenCalledWith(
      "gh",
      "npx",
      ["-y", "server-github"],
      [
        { var: "GITHUB_TOKEN", secret: "gh-token", value: "ghp_secret" },
        { var: "OTHER", secret: "other", value: null },
      ],
      null,
    );
    // The form is emptied (the value gone from the page); the list names the secrets only.
    expect(container.querySelectorAll(".mcp-env-row")).toHaveLength(0);
    expect(container.innerHTML).not.toContain("ghp_secret");
    expect(q(container, ".mcp-server[data-name='gh'] .mcp-secret[data-secret='gh-token']").textContent).toBe("GITHUB_TOKEN ← 密钥 gh-token · 已设置");
    expect(q(container, ".mcp-server[data-name='gh'] .mcp-secret[data-secret='other']").dataset.set).toBe("false");
  });

  it("adds an http server with a header secret", async () => {
    mocks.mcpAdd.mockResolvedValue(ok([time]));
    const { container } = render(<McpPanel />);
    await waitFor(() => expect(q(container, ".mcp-server")).not.toBeNull());
    fireEvent.change(q(container, "#mcp-name"), { target: { value: "remote" } });
    fireEvent.change(q(container, "#mcp-target"), { target: { value: "https://mcp.example.com/mcp" } });
    expect(q(container, "#mcp-env-add")).toBeNull();
    expect(q(container, "#mcp-args")).toBeNull();
    fireEvent.change(q(container, "#mcp-header-secret"), { target: { value: "remote-key" } });
    fireEvent.change(q(container, "#mcp-header-value"), { target: { value: "sk-1" } });
    await act(async () => {
      fireEvent.submit(q(container, "#mcp-form"));
    });
    expect(mocks.mcpAdd).toHaveBeenCalledWith("remote", "https://mcp.example.com/mcp", [], [], { header: "", secret: "remote-key", value: "sk-1" });
  });

  it("trusts a single tool after a test, and stops trusting it", async () => {
    mocks.mcpTest.mockResolvedValue(ok({ name: "mcp-time", version: "1.0", tools: [{ name: "get_current_time", description: null, read_only: true }, { name: "convert_time", description: null, read_only: false }] }));
    mocks.mcpSetTrusted.mockResolvedValueOnce(ok([{ ...time, trusted_tools: ["convert_time"] }])).mockResolvedValueOnce(ok([time]));
    const { container } = render(<McpPanel />);
    await waitFor(() => expect(q(container, ".mcp-test")).not.toBeNull());
    await act(async () => {
      fireEvent.click(q(container, ".mcp-test"));
    });
    const convert = () => q(container, ".mcp-tool[data-tool='convert_time']");
    expect((convert().querySelector(".mcp-trust") as HTMLInputElement).checked).toBe(false);
    await act(async () => {
      fireEvent.click(convert().querySelector(".mcp-trust") as HTMLElement);
    });
    expect(mocks.mcpSetTrusted).toHaveBeenLastCalledWith("time", "convert_time", true);
    expect(convert().dataset.trusted).toBe("true");
    expect((convert().querySelector(".mcp-trust") as HTMLInputElement).checked).toBe(true);
    expect(convert().querySelector(".badge")?.textContent).toBe("已信任");
    await act(async () => {
      fireEvent.click(convert().querySelector(".mcp-trust") as HTMLElement);
    });
    expect(mocks.mcpSetTrusted).toHaveBeenLastCalledWith("time", "convert_time", false);
    expect(convert().dataset.trusted).toBe("false");
    expect(convert().querySelector(".badge")?.textContent).toBe("需批准");
  });

  it("lets the user pick the tools offered to the model and cap them", async () => {
    const tool = (name: string, left_out: string | null) => ({ name, description: null, read_only: true, agent_name: `mcp__time__${name}`, renamed: false, left_out });
    const report = { name: "time", version: "1", tools: [tool("a", null), tool("b", null), tool("c", "over the server's cap of 2 tools")] };
    mocks.mcpTest.mockResolvedValue(ok(report));
    mocks.mcpPickTools.mockResolvedValue(ok([{ ...time, offered_tools: ["a", "c"] }]));
    mocks.mcpSetMaxTools.mockResolvedValue(ok([{ ...time, max_tools: 2 }]));
    expect(nextPick(report.tools, "b", false)).toEqual(["a"]);
    expect(nextPick(report.tools, "c", true)).toEqual(["a", "b", "c"]);
    const { container } = render(<McpPanel />);
    await waitFor(() => expect(q(container, ".mcp-server")).not.toBeNull());
    await act(async () => {
      fireEvent.click(q(container, ".mcp-test"));
    });
    const row = (name: string) => q(container, `.mcp-tool[data-tool="${name}"]`);
    expect(row("c").dataset.offered).toBe("false");
    expect(row("c").textContent).toContain("over the server's cap of 2 tools");
    await act(async () => {
      fireEvent.click(row("b").querySelector(".mcp-offer") as HTMLElement);
    });
    expect(mocks.mcpPickTools).toHaveBeenCalledWith("time", ["a"]);
    expect(mocks.mcpTest).toHaveBeenCalledTimes(2);
    // with a pick, "offer all" goes back to the cap
    await act(async () => {
      fireEvent.click(q(container, ".mcp-offer-all"));
    });
    expect(mocks.mcpPickTools).toHaveBeenLastCalledWith("time", null);
    const max = q(container, ".mcp-max-tools") as HTMLInputElement;
    fireEvent.change(max, { target: { value: "2" } });
    await act(async () => {
      fireEvent.blur(max);
    });
    expect(mocks.mcpSetMaxTools).toHaveBeenCalledWith("time", 2);
  });
});
