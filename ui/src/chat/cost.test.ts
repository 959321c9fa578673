import { describe, expect, it } from "vitest";
import type { ConversationHistory, ModelEntry, RuntimeEvent, Usage } from "../bindings";
import { conversationCost, estimateCost, formatCost, pricesFor, roundsCost, turnCost, type PricingSettings, type Prices } from "./cost";
import { initialTurn, replay } from "./reducer";
import textStream from "./fixtures/text_stream.json";
import toolTurn from "./fixtures/tool_turn.json";

const usage = (input: number, output: number, cacheRead = 0): Usage => ({
  input_tokens: input,
  output_tokens: output,
  cache_read_tokens: cacheRead,
  cache_write_tokens: 0,
});

const entry = (id: string, provider: ModelEntry["provider"], model: string, input: number | null, output: number | null): ModelEntry => ({
  id,
  provider,
  model,
  base_url: null,
  context_window: null,
  input_price_per_mtok: input,
  output_price_per_mtok: output,
});

const settings = (models: ModelEntry[], extra: Partial<PricingSettings> = {}): PricingSettings => ({
  models,
  light_model: null,
  fallback_models: [],
  ...extra,
});

describe("estimateCost", () => {
  const cases: [string, Usage, Prices | null, number | null][] = [
    ["one million input tokens", usage(1_000_000, 0), { input: 2, output: 8 }, 2],
    ["one million output tokens", usage(0, 1_000_000), { input: 2, output: 8 }, 8],
    ["a typical round", usage(1000, 500), { input: 0.27, output: 1.1 }, 0.00082],
    ["cached input counts at the input price", usage(1000, 0, 800), { input: 3, output: 15 }, 0.003],
    ["no tokens", usage(0, 0), { input: 3, output: 15 }, 0],
    ["free model", usage(5000, 5000), { input: 0, output: 0 }, 0],
    ["unknown prices", usage(1000, 500), null, null],
    ["a negative price", usage(1000, 500), { input: -1, output: 1 }, null],
    ["a NaN price", usage(1000, 500), { input: 1, output: Number.NaN }, null],
  ];
  it.each(cases)("%s", (_name, u, prices, expected) => {
    const got = estimateCost(u, prices);
    if (expected === null) expect(got).toBeNull();
    else expect(got).toBeCloseTo(expected, 10);
  });
});

describe("pricesFor", () => {
  const s = settings(
    [
      entry("ds", "deepseek", "deepseek-chat", 0.27, 1.1),
      entry("ds-proxy", "openai_compatible", "deepseek-chat", 0.3, 1.2),
      entry("half", "openai", "gpt-4o", 2.5, null),
      entry("fb", "qwen", "qwen-plus", 0.4, 1.2),
      entry("other-qwen", "qwen", "qwen-max", 1.6, 6.4),
    ],
    { fallback_models: ["fb"] },
  );
  const cases: [string, { provider: string; model: string | null } | null, Prices | null][] = [
    ["by model name, same provider first", { provider: "openai_compatible", model: "deepseek-chat" }, { input: 0.3, output: 1.2 }],
    ["by model name when the provider name differs", { provider: "something", model: "deepseek-chat" }, { input: 0.27, output: 1.1 }],
    ["only one of the two prices", { provider: "openai", model: "gpt-4o" }, null],
    ["a model not in the settings", { provider: "openai", model: "gpt-5" }, null],
    ["after a fallback: the one fallback entry of that provider", { provider: "qwen", model: null }, { input: 0.4, output: 1.2 }],
    ["after a fallback to a provider without a fallback entry", { provider: "deepseek", model: null }, null],
    ["no model yet", null, null],
  ];
  it.each(cases)("%s", (_name, billed, expected) => {
    expect(pricesFor(s, billed)).toEqual(expected);
  });
});

describe("per-round costs", () => {
  const routed = settings([entry("big", "openai_compatible", "mock-large", 2, 8), entry("small", "openai_compatible", "mock-small", 0.5, 1)], {
    light_model: "small",
  });

  it("records each round's usage with the model that served it", () => {
    const v = replay(toolTurn as RuntimeEvent[]);
    expect(v.rounds).toEqual([
      { round: 1, billed: { provider: "mock", model: "mock-large" }, usage: usage(300, 30, 100) },
      { round: 2, billed: { provider: "mock", model: "mock-small" }, usage: usage(500, 20) },
    ]);
  });

  it("prices each round at its own model (a router switches models)", () => {
    const v = replay(toolTurn as RuntimeEvent[]);
    // 300×2 + 30×8 = 840 and 500×0.5 + 20×1 = 270 (per million)
    expect(turnCost(v, routed)).toBeCloseTo(0.00111, 10);
    expect(formatCost(turnCost(v, routed) ?? -1)).toBe("≈ $0.0011");
  });

  it("is unknown when any round's model has no price", () => {
    const onlyBig = settings([entry("big", "openai_compatible", "mock-large", 2, 8)]);
    expect(roundsCost(replay(toolTurn as RuntimeEvent[]).rounds, onlyBig)).toBeNull();
    expect(turnCost(replay(toolTurn as RuntimeEvent[]), settings([]))).toBeNull();
  });

  it("bills rounds after an in-stream fallback to the provider that took over", () => {
    const events: RuntimeEvent[] = [
      { type: "model_start", round: 1, provider: "openai", model: "gpt-4o", tier: null },
      { type: "fallback", from: "openai", to: "qwen", reason: "overloaded", discard_text: true },
      { type: "usage", round: 1, usage: usage(1000, 100), turn: usage(1000, 100) },
    ];
    const v = replay(events);
    expect(v.rounds[0].billed).toEqual({ provider: "qwen", model: null });
    const s = settings([entry("main", "openai", "gpt-4o", 2.5, 10), entry("fb", "qwen", "qwen-plus", 0.4, 1.2)], { fallback_models: ["fb"] });
    expect(turnCost(v, s)).toBeCloseTo((1000 * 0.4 + 100 * 1.2) / 1e6, 10);
    expect(turnCost(v, { ...s, fallback_models: [] })).toBeNull();
  });

  it("is $0 before any usage once a priced model started, unknown before that", () => {
    const started = replay((textStream as RuntimeEvent[]).slice(0, 2));
    const s = settings([entry("m", "openai_compatible", "mock-large", 1, 1)]);
    expect(turnCost(started, s)).toBe(0);
    expect(turnCost(initialTurn(), s)).toBeNull();
  });
});

describe("conversationCost", () => {
  const s = settings([entry("ds", "deepseek", "deepseek-chat", 0.27, 1.1)]);
  const history = (model: string, u: Usage): ConversationHistory => ({
    conversation: { id: "c", title: "", model, updated_at: "", forked_from: null },
    messages: [],
    usage: u,
    last_turn_interrupted: false,
  });
  const liveTurn = replay([
    { type: "model_start", round: 1, provider: "deepseek", model: "deepseek-chat", tier: null },
    { type: "usage", round: 1, usage: usage(1000, 1000), turn: usage(1000, 1000) },
  ]);

  it("adds the stored turns (at the conversation's model) and the live ones", () => {
    const h = history("deepseek/deepseek-chat", usage(1_000_000, 0));
    expect(conversationCost(h, [liveTurn], s)).toBeCloseTo(0.27 + (1000 * 0.27 + 1000 * 1.1) / 1e6, 10);
  });

  it("reads model names that contain a slash", () => {
    const s2 = settings([entry("x", "openai_compatible", "deepseek-ai/DeepSeek-V3", 1, 2)]);
    expect(conversationCost(history("openai-compatible/deepseek-ai/DeepSeek-V3", usage(1_000_000, 0)), [], s2)).toBeCloseTo(1, 10);
  });

  it("is unknown when the stored turns' model has no price or a router may have served them", () => {
    expect(conversationCost(history("openai/gpt-4o", usage(10, 10)), [liveTurn], s)).toBeNull();
    expect(conversationCost(history("deepseek/deepseek-chat", usage(10, 10)), [], { ...s, light_model: "small" })).toBeNull();
  });

  it("shows nothing until some price is known, and ignores turns that never reached a model", () => {
    expect(conversationCost(null, [], s)).toBeNull();
    expect(conversationCost(history("openai/gpt-4o", usage(0, 0)), [], s)).toBeNull();
    expect(conversationCost(null, [initialTurn(), liveTurn], s)).toBeCloseTo((1000 * 0.27 + 1000 * 1.1) / 1e6, 10);
    expect(conversationCost(null, [liveTurn], settings([]))).toBeNull();
  });

  it.each([
    [0, "≈ $0.0000"],
    [0.0123, "≈ $0.0123"],
    [0.99994, "≈ $0.9999"],
    [1.5, "≈ $1.50"],
    [12.345, "≈ $12.35"],
  ])("formats %s as %s", (usd, text) => {
    expect(formatCost(usd)).toBe(text);
  });
});
