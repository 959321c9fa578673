import { describe, expect, it, vi, beforeEach } from "vitest";
import { cleanup, fireEvent, render } from "@testing-library/react";
import type { Settings } from "../bindings";
import ModelsPanel from "./ModelsPanel";

const base: Settings = {
  version: 1,
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
};

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
