import { describe, expect, it } from "vitest";
import { secretSlug, settingsErrorText } from "./format";
import { translate } from "./i18n";

const zh = (k: Parameters<typeof translate>[1], v?: Record<string, string | number>) => translate("zh", k, v);
const en = (k: Parameters<typeof translate>[1], v?: Record<string, string | number>) => translate("en", k, v);

describe("format", () => {
  it("slugs secrets for element ids", () => {
    expect(secretSlug({ kind: "provider", vendor: "deepseek" })).toBe("deepseek");
    expect(secretSlug({ kind: "data_source", source: "tickflow" })).toBe("tickflow");
    expect(secretSlug({ kind: "custom", id: "my-llm" })).toBe("custom-my-llm");
  });

  it("explains settings errors in both languages", () => {
    const err = { type: "out_of_range", field: "stream_idle_timeout_secs", min: 10, max: 600, got: -5 } as const;
    expect(settingsErrorText(err, zh)).toBe("stream_idle_timeout_secs 必须在 10–600 之间（当前为 -5）");
    expect(settingsErrorText(err, en)).toBe("stream_idle_timeout_secs must be between 10 and 600 (got -5)");
  });
});
