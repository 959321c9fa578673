// Cost estimate for the status bar, from the per-million-token prices in Settings. Shown
// only when every token counted has a known price: an unknown price gives null (nothing
// shown), never $0.
import type { ConversationHistory, ModelEntry, Settings, Usage } from "../bindings";
import type { BilledModel, RoundUsage, TurnView } from "./reducer";

/** USD per million tokens. */
export interface Prices {
  input: number;
  output: number;
}

/** What the estimate needs from the settings. */
export type PricingSettings = Pick<Settings, "models" | "light_model" | "fallback_models">;

const validPrice = (p: number | null | undefined): p is number => typeof p === "number" && Number.isFinite(p) && p >= 0;

/**
 * USD for `usage` at `prices`, or null when the prices are unknown. Input tokens include
 * cached ones; the settings have no separate cache price, so they count at the input
 * price (an upper bound for vendors that discount cache reads).
 */
export function estimateCost(usage: Usage, prices: Prices | null): number | null {
  if (!prices || !validPrice(prices.input) || !validPrice(prices.output)) return null;
  return (usage.input_tokens * prices.input + usage.output_tokens * prices.output) / 1_000_000;
}

function entryPrices(m: ModelEntry): Prices | null {
  return validPrice(m.input_price_per_mtok) && validPrice(m.output_price_per_mtok)
    ? { input: m.input_price_per_mtok, output: m.output_price_per_mtok }
    : null;
}

/** Whether a settings entry's provider kind is the runtime's provider name. */
function sameProvider(kind: string, name: string): boolean {
  const n = name.toLowerCase();
  return kind === n || kind.replace("_", "-") === n || (kind === "claude" && n === "anthropic");
}

/**
 * The prices of the model that served a round: the entry with that `model` name (the one
 * of the same provider first). With only the provider known (an in-stream fallback), the
 * single fallback entry of that provider, if there is exactly one.
 */
export function pricesFor(settings: PricingSettings, billed: BilledModel | null): Prices | null {
  if (!billed) return null;
  if (billed.model === null) {
    const fallbacks = settings.models.filter((m) => settings.fallback_models.includes(m.id) && sameProvider(m.provider, billed.provider));
    return fallbacks.length === 1 ? entryPrices(fallbacks[0]) : null;
  }
  const named = settings.models.filter((m) => m.model === billed.model);
  const same = named.filter((m) => sameProvider(m.provider, billed.provider));
  for (const m of same.length ? same : named) {
    const p = entryPrices(m);
    if (p) return p;
  }
  return null;
}

/** Sum over rounds, each at its own model's prices; null if any round's price is unknown. */
export function roundsCost(rounds: RoundUsage[], settings: PricingSettings): number | null {
  let total = 0;
  for (const r of rounds) {
    const c = estimateCost(r.usage, pricesFor(settings, r.billed));
    if (c === null) return null;
    total += c;
  }
  return total;
}

/** The turn's cost so far; before any usage, $0 once a priced model has started. */
export function turnCost(view: TurnView, settings: PricingSettings): number | null {
  if (view.rounds.length > 0) return roundsCost(view.rounds, settings);
  return pricesFor(settings, view.billed) ? 0 : null;
}

const tokens = (u: Usage) => u.input_tokens + u.output_tokens;

/**
 * The conversation's cost: its stored turns at the conversation's model (known only
 * without heavy/light routing, which may have sent turns elsewhere) plus the turns shown
 * live.
 */
export function conversationCost(history: ConversationHistory | null, live: TurnView[], settings: PricingSettings): number | null {
  let total = 0;
  // Nothing is shown until some price is known (an empty conversation is not "$0" when
  // its model has no prices).
  let priced = false;
  if (history && tokens(history.usage) > 0) {
    if (settings.light_model !== null) return null;
    // Stored as "provider/model" (the model name may itself contain "/").
    const label = history.conversation.model;
    const cut = label.indexOf("/");
    const billed = cut < 0 ? { provider: "", model: label } : { provider: label.slice(0, cut), model: label.slice(cut + 1) };
    const c = estimateCost(history.usage, pricesFor(settings, billed));
    if (c === null) return null;
    total += c;
    priced = true;
  }
  for (const v of live) {
    const c = turnCost(v, settings);
    if (c === null) {
      // A turn that never reached a model (failed to start) used nothing.
      if (v.rounds.length > 0 || v.billed !== null) return null;
      continue;
    }
    total += c;
    priced = true;
  }
  return priced ? total : null;
}

/** "≈ $0.0123"; two decimals from $1 up. */
export function formatCost(usd: number): string {
  return `≈ $${usd.toFixed(usd < 1 ? 4 : 2)}`;
}
