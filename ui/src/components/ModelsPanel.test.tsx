import { describe, expect, it, vi, beforeEach } from "vitest";
import { act, cleanup, fireEvent, render, screen } from "@testing-library/react";
import { useState } from "react";
import type { ConnectionFailed, ConnectionOk, ErrorKind, ModelEntry, Settings } from "../bindings";
import { LanguageContext } from "../i18n";

const mocks = vi.hoisted(() => ({ testConnection: vi.fn() }));
vi.mock("../bindings", () => ({ commands: mocks }));

import ModelsPanel, { modelsProblem } from "./ModelsPanel";
import { translate } from "../i18n";
import { riskFixture } from "../risk/fixtures";

const entry = (id: string, over: Partial<ModelEntry> = {}): ModelEntry => ({
  id,
  provider: "deepseek",
  model: `${id}-model`,
  base_url: null,
  context_window: null,
  input_price_per_mtok: null,
  output_price_per_mtok: null,
  ...over,
});

const base: Settings = {
  version: 1,
  risk: riskFixture,
  language: "zh",
  theme: "system",
  close_to_tray: false,
  notifications: true,
  models: [
    { id: "ds", provider: "deepseek", model: "deepseek-chat", base_url: null, context_window: null, input_price_per_mtok: null, output_price_per_mtok: 1.1 },
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

const three: Settings = { ...base, models: [entry("a"), entry("b"), entry("c")], main_model: "a" };

/** Holds the settings like the Settings page does; `latest()` is what would be saved. */
function harness(initial: Settings, lang: "zh" | "en" = "zh") {
  let current = initial;
  function Harness() {
    const [s, setS] = useState(initial);
    return (
      <LanguageContext.Provider value={lang}>
        <ModelsPanel
          settings={s}
          onChange={(n) => {
            current = n;
            setS(n);
          }}
        />
      </LanguageContext.Provider>
    );
  }
  render(<Harness />);
  return { latest: () => current };
}

const el = <E extends HTMLElement = HTMLElement>(sel: string) => document.querySelector(sel) as E;
const optionValues = (sel: HTMLSelectElement) => Array.from(sel.options).map((o) => o.value);
const fallbackIds = () => Array.from(document.querySelectorAll<HTMLElement>("#fallback-list .fallback-item")).map((li) => li.dataset.id);

describe("ModelsPanel prices", () => {
  beforeEach(() => cleanup());

  it("edits a model's prices per million tokens; empty means unknown", () => {
    const onChange = vi.fn();
    render(<ModelsPanel settings={base} onChange={onChange} />);
    const input = document.getElementById("model-price-in-ds") as HTMLInputElement;
    const output = document.getElementById("model-price-out-ds") as HTMLInputElement;
    expect(input.value).toBe("");
    expect(output.value).toBe("1.1");
    fireEvent.change(input, { target: { value: "0.27" } });
    expect(onChange.mock.calls[0][0].models[0]).toMatchObject({ input_price_per_mtok: 0.27, output_price_per_mtok: 1.1 });
    fireEvent.change(output, { target: { value: "" } });
    expect(onChange.mock.calls[1][0].models[0]).toMatchObject({ input_price_per_mtok: null, output_price_per_mtok: null });
  });
});

describe("ModelsPanel light model", () => {
  beforeEach(() => cleanup());

  it("offers none and every entry but the main one", () => {
    const h = harness(three);
    const select = el<HTMLSelectElement>("#set-light-model");
    expect(screen.getByText("轻量模型（用于简单问题的路由）")).toBeTruthy();
    expect(optionValues(select)).toEqual(["", "b", "c"]);
    expect(select.value).toBe("");
    fireEvent.change(select, { target: { value: "c" } });
    expect(h.latest().light_model).toBe("c");
    fireEvent.change(select, { target: { value: "" } });
    expect(h.latest().light_model).toBeNull();
  });

  it("making the light model the main model clears it, so they are never the same", () => {
    const h = harness({ ...three, light_model: "b" });
    expect(el<HTMLSelectElement>("#set-light-model").value).toBe("b");
    const radio = screen.getByLabelText("b: 设为主模型") as HTMLInputElement;
    fireEvent.click(radio);
    expect(h.latest()).toMatchObject({ main_model: "b", light_model: null });
    expect(optionValues(el<HTMLSelectElement>("#set-light-model"))).toEqual(["", "a", "c"]);
  });

  it("removing the light model's entry clears it", () => {
    const h = harness({ ...three, light_model: "c" });
    const row = el('.model-entry[data-id="c"]');
    fireEvent.click(row.querySelector(".model-remove") as HTMLButtonElement);
    expect(h.latest().light_model).toBeNull();
    expect(h.latest().models.map((m) => m.id)).toEqual(["a", "b"]);
  });

  it("is labelled in English too", () => {
    harness(three, "en");
    expect(screen.getByText("Light model (routing for simple turns)")).toBeTruthy();
  });
});

describe("ModelsPanel fallback order", () => {
  beforeEach(() => cleanup());

  it("adds, reorders and removes fallbacks; the main model is not offered", () => {
    const h = harness({ ...three, models: [...three.models, entry("d")] });
    const add = el<HTMLSelectElement>("#fallback-add");
    expect(optionValues(add)).toEqual(["", "b", "c", "d"]);
    fireEvent.change(add, { target: { value: "c" } });
    fireEvent.change(el<HTMLSelectElement>("#fallback-add"), { target: { value: "b" } });
    fireEvent.change(el<HTMLSelectElement>("#fallback-add"), { target: { value: "d" } });
    expect(h.latest().fallback_models).toEqual(["c", "b", "d"]);
    expect(fallbackIds()).toEqual(["c", "b", "d"]);
    // Nothing left to add.
    expect(optionValues(el<HTMLSelectElement>("#fallback-add"))).toEqual([""]);
    expect(el<HTMLSelectElement>("#fallback-add").disabled).toBe(true);

    const item = (id: string) => el(`.fallback-item[data-id="${id}"]`);
    // The first cannot go up, the last cannot go down.
    expect((item("c").querySelector(".fallback-up") as HTMLButtonElement).disabled).toBe(true);
    expect((item("d").querySelector(".fallback-down") as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(item("d").querySelector(".fallback-up") as HTMLButtonElement);
    expect(h.latest().fallback_models).toEqual(["c", "d", "b"]);
    fireEvent.click(item("c").querySelector(".fallback-down") as HTMLButtonElement);
    expect(h.latest().fallback_models).toEqual(["d", "c", "b"]);
    expect(fallbackIds()).toEqual(["d", "c", "b"]);
    fireEvent.click(item("c").querySelector(".fallback-remove") as HTMLButtonElement);
    expect(h.latest().fallback_models).toEqual(["d", "b"]);
    expect(optionValues(el<HTMLSelectElement>("#fallback-add"))).toEqual(["", "c"]);
  });

  it("drops an entry from the fallbacks when it becomes the main model, or is removed", () => {
    const h = harness({ ...three, fallback_models: ["b", "c"] });
    fireEvent.click(screen.getByLabelText("c: 设为主模型"));
    expect(h.latest()).toMatchObject({ main_model: "c", fallback_models: ["b"] });
    expect(fallbackIds()).toEqual(["b"]);
    expect(optionValues(el<HTMLSelectElement>("#fallback-add"))).toEqual(["", "a"]);
    fireEvent.click(el('.model-entry[data-id="b"]').querySelector(".model-remove") as HTMLButtonElement);
    expect(h.latest().fallback_models).toEqual([]);
    expect(screen.getByText("未设置备用模型")).toBeTruthy();
  });
});

describe("ModelsPanel context window", () => {
  beforeEach(() => cleanup());

  it("is empty for automatic and takes a positive whole number", () => {
    const h = harness(three);
    const input = el<HTMLInputElement>("#model-context-b");
    expect(input.value).toBe("");
    expect(input.placeholder).toBe("自动");
    fireEvent.change(input, { target: { value: "131072" } });
    expect(h.latest().models[1].context_window).toBe(131072);
    expect(modelsProblem(h.latest(), (k) => translate("zh", k))).toBeNull();
    fireEvent.change(input, { target: { value: "" } });
    expect(h.latest().models[1].context_window).toBeNull();
    expect(document.querySelector(".model-context-error")).toBeNull();
  });

  it("rejects zero, negative and fractional values with a message", () => {
    const h = harness(three);
    const input = el<HTMLInputElement>("#model-context-b");
    for (const bad of ["0", "-4096", "1.5"]) {
      fireEvent.change(input, { target: { value: bad } });
      expect(el("#model-context-error-b").textContent).toBe("上下文窗口必须是正整数（留空为自动）");
      expect(input.getAttribute("aria-invalid")).toBe("true");
      expect(modelsProblem(h.latest(), (k) => translate("zh", k))).toBe("b: 上下文窗口必须是正整数（留空为自动）");
    }
    fireEvent.change(input, { target: { value: "8192" } });
    expect(document.getElementById("model-context-error-b")).toBeNull();
  });
});

describe("ModelsPanel add form", () => {
  beforeEach(() => cleanup());

  it("names the vendors instead of showing enum values", () => {
    harness(base);
    const select = el<HTMLSelectElement>("#model-provider");
    expect(Array.from(select.options).map((o) => o.textContent)).toEqual([
      "Claude",
      "OpenAI",
      "Gemini",
      "DeepSeek",
      "通义千问 (Qwen)",
      "Kimi",
      "Ollama",
      "自定义 OpenAI 兼容",
    ]);
    expect(el('.model-entry[data-id="ds"] .model-provider').textContent).toBe("DeepSeek");
    cleanup();
    harness(base, "en");
    expect(Array.from(el<HTMLSelectElement>("#model-provider").options).map((o) => o.textContent)).toContain("Custom OpenAI-compatible");
  });

  it("prefills Ollama's local URL and requires a URL for a custom endpoint", () => {
    const h = harness(base);
    const url = el<HTMLInputElement>("#model-base-url");
    fireEvent.change(el("#model-provider"), { target: { value: "ollama" } });
    expect(url.value).toBe("http://127.0.0.1:11434/v1");
    expect(el<HTMLInputElement>("#model-name").value).toBe("qwen2.5:7b");
    fireEvent.click(el("#model-add"));
    expect(h.latest().models[1]).toMatchObject({ id: "ollama", provider: "ollama", base_url: "http://127.0.0.1:11434/v1" });

    fireEvent.change(el("#model-provider"), { target: { value: "openai_compatible" } });
    expect(url.value).toBe("");
    expect(url.getAttribute("aria-required")).toBe("true");
    expect(url.placeholder).toBe("base URL（必填，如 https://host/v1）");
    fireEvent.change(el("#model-name"), { target: { value: "glm-4" } });
    fireEvent.click(el("#model-add"));
    expect(el("#model-add-error").textContent).toBe("自定义 OpenAI 兼容端点必须填写 base URL");
    expect(h.latest().models).toHaveLength(2);
    fireEvent.change(url, { target: { value: "api.example.com/v1" } });
    fireEvent.click(el("#model-add"));
    expect(el("#model-add-error").textContent).toBe("base URL 必须以 http:// 或 https:// 开头");
    fireEvent.change(url, { target: { value: "https://api.example.com/v1" } });
    fireEvent.click(el("#model-add"));
    expect(document.getElementById("model-add-error")).toBeNull();
    expect(h.latest().models[2]).toMatchObject({ id: "openai-compatible", provider: "openai_compatible", model: "glm-4", base_url: "https://api.example.com/v1" });
    expect(h.latest().main_model).toBe("ds");
  });

  it("refuses a duplicate id with a message", () => {
    const h = harness(base);
    fireEvent.change(el("#model-id"), { target: { value: "ds" } });
    fireEvent.click(el("#model-add"));
    expect(el("#model-add-error").textContent).toBe("已有 id 为“ds”的模型，请换一个 id");
    expect(h.latest().models).toHaveLength(1);
    fireEvent.change(el("#model-id"), { target: { value: "DS 2" } });
    fireEvent.click(el("#model-add"));
    expect(el("#model-add-error").textContent).toBe("id 只能由 1–64 个小写字母、数字、- 或 _ 组成");
    fireEvent.change(el("#model-id"), { target: { value: "ds2" } });
    fireEvent.click(el("#model-add"));
    expect(h.latest().models.map((m) => m.id)).toEqual(["ds", "ds2"]);
  });

  it("the first model added becomes the main model", () => {
    const h = harness({ ...base, models: [], main_model: null });
    fireEvent.click(el("#model-add"));
    expect(h.latest()).toMatchObject({ main_model: "deepseek", models: [{ id: "deepseek", provider: "deepseek", model: "deepseek-chat", base_url: null }] });
  });
});

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe("ModelsPanel test connection", () => {
  beforeEach(() => {
    cleanup();
    vi.clearAllMocks();
  });

  it("tests the entry as edited, shows progress, then the model and time", async () => {
    const d = deferred<{ status: "ok"; data: ConnectionOk }>();
    mocks.testConnection.mockReturnValue(d.promise);
    harness(three);
    fireEvent.change(el("#model-context-b"), { target: { value: "65536" } });
    const button = el<HTMLButtonElement>('.model-test[data-id="b"]');
    fireEvent.click(button);
    expect(mocks.testConnection).toHaveBeenCalledWith({ ...entry("b"), context_window: 65536 });
    expect(button.disabled).toBe(true);
    expect(button.textContent).toContain("测试中…");
    expect(document.querySelector(".model-test-result")).toBeNull();
    // Other entries can still be tested.
    expect(el<HTMLButtonElement>('.model-test[data-id="a"]').disabled).toBe(false);
    await act(async () => d.resolve({ status: "ok", data: { provider: "deepseek", model: "deepseek-chat", elapsed_ms: 842, reply: "pong" } }));
    const result = el('.model-test-result[data-id="b"]');
    expect(result.dataset.ok).toBe("true");
    expect(result.textContent).toBe("✓ 连接正常 · deepseek-chat · 842 ms");
    expect(button.disabled).toBe(false);
    expect(button.textContent).toBe("测试连接");
  });

  it("shows the classified kind and the backend's message verbatim", async () => {
    const failed: ConnectionFailed = { kind: "authentication", message: "401 Unauthorized: invalid x-api-key — check the DeepSeek key in Settings" };
    mocks.testConnection.mockResolvedValue({ status: "error", error: failed });
    harness(three);
    await act(async () => fireEvent.click(el('.model-test[data-id="a"]')));
    const result = el('.model-test-result[data-id="a"]');
    expect(result.dataset.ok).toBe("false");
    expect(result.querySelector(".test-kind")?.textContent).toBe("✗ 密钥无效或无权限：");
    expect(result.querySelector(".test-message")?.textContent).toBe(failed.message);
  });

  it("has a label for every error kind and for a setup problem, in both languages", async () => {
    const kinds: [ErrorKind | null, string, string][] = [
      ["authentication", "密钥无效或无权限", "Invalid key or no access"],
      ["permission", "没有使用该模型的权限", "No permission for this model"],
      ["rate_limit", "请求过于频繁", "Too many requests"],
      ["overloaded", "服务繁忙", "Service overloaded"],
      ["context_too_long", "上下文过长", "Context too long"],
      ["invalid_request", "请求无效（检查模型名和地址）", "Invalid request (check the model name and URL)"],
      ["timeout", "超时", "Timed out"],
      ["network", "网络不可达", "Network unreachable"],
      ["server", "服务端错误", "Server error"],
      ["protocol", "响应格式异常", "Malformed response"],
      ["cancelled", "已取消", "Cancelled"],
      ["internal", "内部错误", "Internal error"],
      [null, "无法发起请求", "Could not make the request"],
    ];
    for (const lang of ["zh", "en"] as const) {
      for (const [kind, zh, en] of kinds) {
        cleanup();
        mocks.testConnection.mockResolvedValue({ status: "error", error: { kind, message: "m" } });
        harness(base, lang);
        await act(async () => fireEvent.click(el('.model-test[data-id="ds"]')));
        const text = el('.model-test-result[data-id="ds"] .test-kind').textContent;
        expect(text).toBe(lang === "zh" ? `✗ ${zh}：` : `✗ ${en}: `);
      }
    }
  });

  it("says that unsaved settings such as the proxy are not used", () => {
    harness(base);
    expect(document.body.textContent).toContain("代理等其他设置使用已保存的值");
  });

  it("drops the answer for an entry removed while it was tested", async () => {
    const d = deferred<{ status: "ok"; data: ConnectionOk }>();
    mocks.testConnection.mockReturnValue(d.promise);
    harness(three);
    fireEvent.click(el('.model-test[data-id="c"]'));
    fireEvent.click(el('.model-entry[data-id="c"] .model-remove'));
    await act(async () => d.resolve({ status: "ok", data: { provider: "deepseek", model: "x", elapsed_ms: 1, reply: "" } }));
    expect(document.querySelector(".model-test-result")).toBeNull();
  });
});
