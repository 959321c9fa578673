import { beforeEach, describe, expect, it, vi } from "vitest";
import { act, cleanup, fireEvent, render, waitFor } from "@testing-library/react";
import type { ChannelView } from "../bindings";

const mocks = vi.hoisted(() => ({
  pushChannels: vi.fn(),
  pushAdd: vi.fn(),
  pushRemove: vi.fn(),
  pushTest: vi.fn(),
  pushSetEvents: vi.fn(),
}));
vi.mock("../bindings", () => ({ commands: mocks }));

import { alertsText } from "./alerts";
import PushPanel, { recipients, testText, toggled } from "./PushPanel";

const ok = <T,>(data: T) => ({ status: "ok", data });
const hook: ChannelView = { name: "desk", kind: "webhook", url: "http://127.0.0.1:9/hook", chat_id: null, email: null, has_token: false, has_sign_secret: false, secret_in: null, last: { status: "failed", error: "HTTP 404: no such hook", at: "2026-12-05T07:00:00Z" }, events: ["alerts"] };
const q = (c: HTMLElement, sel: string) => c.querySelector(sel) as HTMLElement;

describe("Settings → Push channels", () => {
  beforeEach(() => {
    cleanup();
    vi.clearAllMocks();
    mocks.pushChannels.mockResolvedValue(ok([hook]));
  });

  it("words a test send's outcome", () => {
    const en = alertsText("en");
    expect(testText({ ok: true, http_status: 200, answer: "ok" }, en)).toBe("Test delivered (HTTP 200)");
    expect(testText({ ok: false, http_status: null, answer: "connection refused" }, en)).toBe("Test failed (—): connection refused");
  });

  it("shows each channel's last push and what a test got back", async () => {
    mocks.pushTest.mockResolvedValue(ok({ ok: false, http_status: 404, answer: "no such hook" }));
    const { container } = render(<PushPanel />);
    await waitFor(() => expect(q(container, ".push-channel")).not.toBeNull());
    expect(q(container, ".push-last").textContent).toBe("最近一次推送：失败（HTTP 404: no such hook）");
    await act(async () => {
      fireEvent.click(q(container, ".push-test"));
    });
    expect(mocks.pushTest).toHaveBeenCalledWith("desk");
    expect(q(container, ".push-test-result").textContent).toBe("测试失败（404）：no such hook");
  });

  it("turns one event on or off, keeping the others in order", () => {
    expect(toggled(["alerts"], "tasks", true)).toEqual(["alerts", "tasks"]);
    expect(toggled(["approvals", "alerts"], "schedules", true)).toEqual(["alerts", "schedules", "approvals"]);
    expect(toggled(["alerts", "tasks"], "alerts", false)).toEqual(["tasks"]);
    expect(toggled(["tasks"], "tasks", false)).toEqual([]);
  });

  it("shows each channel's events and saves a ticked one; the backend's refusal is shown", async () => {
    mocks.pushSetEvents.mockResolvedValueOnce(ok({ ...hook, events: ["alerts", "tasks"] }));
    const { container } = render(<PushPanel />);
    await waitFor(() => expect(q(container, ".push-channel")).not.toBeNull());
    const box = (e: string) => q(container, `.push-event-${e}`) as HTMLInputElement;
    expect([box("alerts").checked, box("tasks").checked, box("schedules").checked, box("approvals").checked]).toEqual([true, false, false, false]);
    await act(async () => {
      fireEvent.click(box("tasks"));
    });
    expect(mocks.pushSetEvents).toHaveBeenCalledWith("desk", ["alerts", "tasks"]);
    expect(box("tasks").checked).toBe(true);
    mocks.pushSetEvents.mockResolvedValueOnce({ status: "error", error: { kind: "invalid_input", message: "name at least one push event", code: null } });
    await act(async () => {
      fireEvent.click(box("alerts"));
    });
    expect(mocks.pushSetEvents).toHaveBeenLastCalledWith("desk", ["tasks"]);
    expect(q(container, "#push-note").textContent).toContain("name at least one push event");
  });

  it("sends a webhook's secret with the header or query parameter it goes in", async () => {
    mocks.pushAdd.mockResolvedValue(ok({ ...hook, name: "ci", has_token: true, secret_in: "header:X-Token", last: null }));
    const { container } = render(<PushPanel />);
    await waitFor(() => expect(q(container, "#push-form")).not.toBeNull());
    fireEvent.change(q(container, "#push-name"), { target: { value: "ci" } });
    fireEvent.change(q(container, "#push-url"), { target: { value: "https://ci.example.com/hook" } });
    fireEvent.change(q(container, "#push-webhook-secret"), { target: { value: "s3cret" } });
    fireEvent.change(q(container, "#push-secret-name"), { target: { value: "X-Token" } });
    await act(async () => {
      fireEvent.submit(q(container, "#push-form"));
    });
    expect(mocks.pushAdd).toHaveBeenLastCalledWith("ci", "webhook", "https://ci.example.com/hook", false, null, null, { token: "s3cret", sign_secret: null, secret_header: "X-Token", secret_query: null });
    fireEvent.change(q(container, "#push-name"), { target: { value: "q" } });
    fireEvent.change(q(container, "#push-url"), { target: { value: "https://q.example.com/hook?token=abc" } });
    fireEvent.change(q(container, "#push-secret-in"), { target: { value: "query" } });
    await act(async () => {
      fireEvent.submit(q(container, "#push-form"));
    });
    expect(mocks.pushAdd).toHaveBeenLastCalledWith("q", "webhook", "https://q.example.com/hook?token=abc", false, null, null, { token: null, sign_secret: null, secret_header: null, secret_query: "token" });
  });

  it("sends a robot's token with the channel and clears the form", async () => {
    mocks.pushAdd.mockResolvedValue(ok({ ...hook, name: "wx", kind: "wecom", has_token: true, last: null }));
    const { container } = render(<PushPanel />);
    await waitFor(() => expect(q(container, "#push-form")).not.toBeNull());
    fireEvent.change(q(container, "#push-name"), { target: { value: "wx" } });
    fireEvent.change(q(container, "#push-kind"), { target: { value: "wecom" } });
    fireEvent.change(q(container, "#push-token"), { target: { value: "key-123" } });
    await act(async () => {
      fireEvent.submit(q(container, "#push-form"));
    });
    expect(mocks.pushAdd).toHaveBeenCalledWith("wx", "wecom", null, false, null, null, { token: "key-123", sign_secret: null, secret_header: null, secret_query: null });
    expect(q(container, "#push-note").textContent).toBe("已添加渠道「wx」");
    expect((q(container, "#push-name") as HTMLInputElement).value).toBe("");
  });

  it("reads the recipients typed in one field", () => {
    expect(recipients(" a@x.cn, b@x.cn;c@x.cn，d@x.cn\n ,")).toEqual(["a@x.cn", "b@x.cn", "c@x.cn", "d@x.cn"]);
    expect(recipients(" ")).toEqual([]);
    expect(testText({ ok: true, http_status: null, answer: "250 Message accepted" }, alertsText("en"))).toBe("Test delivered: 250 Message accepted");
  });

  it("adds an e-mail channel: its addresses, its password as the token, no private address", async () => {
    const mail: ChannelView = { ...hook, name: "mail", kind: "email", url: "smtps://smtp.example.com", email: { from: "desk@example.com", to: ["a@example.com", "b@example.com"], user: null, ca_cert: null }, has_token: true, last: null };
    mocks.pushAdd.mockResolvedValue(ok(mail));
    const { container } = render(<PushPanel />);
    await waitFor(() => expect(q(container, "#push-form")).not.toBeNull());
    expect(q(container, "#push-from")).toBeNull();
    fireEvent.change(q(container, "#push-kind"), { target: { value: "email" } });
    expect(q(container, "#push-private")).toBeNull();
    expect(q(container, "#push-token")).toBeNull();
    expect((q(container, "#push-password") as HTMLInputElement).type).toBe("password");
    fireEvent.change(q(container, "#push-name"), { target: { value: "mail" } });
    fireEvent.change(q(container, "#push-url"), { target: { value: " smtps://smtp.example.com " } });
    fireEvent.change(q(container, "#push-from"), { target: { value: "desk@example.com" } });
    fireEvent.change(q(container, "#push-to"), { target: { value: "a@example.com, b@example.com" } });
    fireEvent.change(q(container, "#push-password"), { target: { value: "pw-1" } });
    await act(async () => {
      fireEvent.submit(q(container, "#push-form"));
    });
    expect(mocks.pushAdd).toHaveBeenCalledWith("mail", "email", "smtps://smtp.example.com", false, null, { from: "desk@example.com", to: ["a@example.com", "b@example.com"], user: null, ca_cert: null }, { token: "pw-1", sign_secret: null, secret_header: null, secret_query: null });
    expect(q(container, "#push-note").textContent).toBe("已添加渠道「mail」");
    expect((q(container, "#push-kind") as HTMLSelectElement).value).toBe("webhook");
  });

  it("sends a login when given; shows the backend's refusal and keeps the form", async () => {
    mocks.pushAdd.mockResolvedValue({ status: "error", error: { kind: "invalid_input", message: "recipient 'a@': Missing domain or user", code: null } });
    const { container } = render(<PushPanel />);
    await waitFor(() => expect(q(container, "#push-form")).not.toBeNull());
    fireEvent.change(q(container, "#push-kind"), { target: { value: "email" } });
    fireEvent.change(q(container, "#push-name"), { target: { value: "mail" } });
    fireEvent.change(q(container, "#push-url"), { target: { value: "smtp://smtp.example.com:587" } });
    fireEvent.change(q(container, "#push-from"), { target: { value: "Desk <desk@example.com>" } });
    fireEvent.change(q(container, "#push-to"), { target: { value: "a@" } });
    fireEvent.change(q(container, "#push-user"), { target: { value: " login " } });
    fireEvent.change(q(container, "#push-ca"), { target: { value: " /etc/corp/ca.pem " } });
    await act(async () => {
      fireEvent.submit(q(container, "#push-form"));
    });
    expect(mocks.pushAdd).toHaveBeenCalledWith("mail", "email", "smtp://smtp.example.com:587", false, null, { from: "Desk <desk@example.com>", to: ["a@"], user: "login", ca_cert: "/etc/corp/ca.pem" }, { token: null, sign_secret: null, secret_header: null, secret_query: null });
    const shown = q(container, "#push-note");
    expect(shown.getAttribute("role")).toBe("alert");
    expect(shown.textContent).toContain("recipient 'a@': Missing domain or user");
    expect((q(container, "#push-to") as HTMLInputElement).value).toBe("a@");
  });

  it("lists an e-mail channel with its recipients and shows the mail server's answer to a test", async () => {
    const mail: ChannelView = { ...hook, name: "mail", kind: "email", url: "smtps://smtp.example.com", email: { from: "desk@example.com", to: ["a@example.com", "b@example.com"], user: null, ca_cert: "/etc/corp/ca.pem" }, has_token: true, last: null };
    mocks.pushChannels.mockResolvedValue(ok([mail]));
    mocks.pushTest.mockResolvedValue(ok({ ok: true, http_status: null, answer: "250 Message accepted for delivery" }));
    const { container } = render(<PushPanel />);
    await waitFor(() => expect(q(container, ".push-channel[data-kind='email']")).not.toBeNull());
    expect(q(container, ".push-to").textContent).toBe("收件人：a@example.com, b@example.com");
    expect(q(container, ".push-channel .badge").textContent).toBe("密码已存入钥匙串");
    expect(q(container, ".push-ca").textContent).toBe("信任 CA：/etc/corp/ca.pem");
    await act(async () => {
      fireEvent.click(q(container, ".push-test"));
    });
    expect(mocks.pushTest).toHaveBeenCalledWith("mail");
    expect(q(container, ".push-test-result").textContent).toBe("测试成功：250 Message accepted for delivery");
  });
});
