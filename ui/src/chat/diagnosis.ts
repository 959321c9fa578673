// Recognises a stock diagnosis among tool results so it can be shown as a card, and
// formats its numbers. Nothing is ever made up: a field that is missing or not a finite
// number stays null and is shown as "—".
import type { Language, Value } from "../bindings";

/** One target level: `kind` is the engine's label (conservative, aggressive,
 * measured_move, …) or null when the result gave a bare price. */
export interface TargetLevel {
  kind: string | null;
  price: number | null;
}

export interface Diagnosis {
  code: string | null;
  name: string | null;
  health: string | null;
  maPattern: string | null;
  l2Channel: string | null;
  triggers: string[];
  latestClose: number | null;
  dayChangePct: number | null;
  /** Holding cost and profit/loss, when the diagnosis was for a position. */
  cost: number | null;
  pnlPct: number | null;
  stop: number | null;
  /** The headline targets (conservative / aggressive, or the bare prices given). */
  targets: TargetLevel[];
  /** The candidate levels the headline targets were chosen from. */
  candidates: TargetLevel[];
  dataStatus: string | null;
  asOf: string | null;
}

type Obj = { [k: string]: Value };
const isObj = (v: Value | undefined): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function str(v: Value | undefined): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (isObj(v)) {
    // {label|name|status|value: …} objects collapse to their most telling field.
    for (const k of ["label", "name", "status", "value", "price", "level"]) {
      const s = str(v[k]);
      if (s) return s;
    }
  }
  return JSON.stringify(v);
}

/** A finite number, or null (a numeric string counts; anything else does not). */
export function num(v: Value | undefined): number | null {
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (typeof v === "string" && v.trim() !== "") {
    const n = Number(v);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

function list(v: Value | undefined): string[] {
  if (v === null || v === undefined) return [];
  if (Array.isArray(v)) return v.map((x) => str(x) ?? "").filter((s) => s !== "");
  const s = str(v);
  return s ? [s] : [];
}

function level(v: Value): TargetLevel | null {
  if (isObj(v)) {
    const kind = str(v.kind ?? v.label ?? v.name ?? null);
    return { kind, price: num(v.price ?? v.value ?? v.level) };
  }
  if (v === null) return null;
  return { kind: null, price: num(v) };
}

/** Targets as the engine writes them ({conservative, aggressive, candidates}), as a list
 * of prices or levels, or as {t1: 12.5, …}. */
function parseTargets(v: Value | undefined): { targets: TargetLevel[]; candidates: TargetLevel[] } {
  if (v === null || v === undefined) return { targets: [], candidates: [] };
  if (Array.isArray(v)) return { targets: v.flatMap((x) => level(x) ?? []), candidates: [] };
  if (isObj(v)) {
    const targets: TargetLevel[] = [];
    let candidates: TargetLevel[] = [];
    for (const [k, x] of Object.entries(v)) {
      if (k === "candidates") {
        candidates = Array.isArray(x) ? x.flatMap((c) => level(c) ?? []) : [];
      } else if (k === "conservative" || k === "aggressive") {
        // Always shown, "—" when the engine could not compute it.
        targets.push({ kind: k, price: num(x) });
      } else if (x !== null && typeof x !== "object") {
        targets.push({ kind: k, price: num(x) });
      }
    }
    return { targets, candidates };
  }
  return { targets: [{ kind: null, price: num(v) }], candidates: [] };
}

/** The diagnosis inside a tool result (the result itself or its `diagnosis` field), or
 * null when the result is not one. */
export function asDiagnosis(result: Value | null): Diagnosis | null {
  if (!isObj(result ?? null)) return null;
  const root = result as Obj;
  const d = isObj(root.diagnosis) ? root.diagnosis : root;
  if (!("health" in d) && !("ma_pattern" in d) && !("l2_channel" in d)) return null;
  const { targets, candidates } = parseTargets(d.targets);
  return {
    code: str(d.code ?? root.code),
    name: str(d.name ?? root.name),
    health: str(d.health),
    maPattern: str(d.ma_pattern),
    l2Channel: str(d.l2_channel),
    triggers: list(d.l4_triggers ?? d.triggers),
    latestClose: num(d.latest_close ?? root.latest_close),
    dayChangePct: num(d.day_change_pct),
    cost: num(d.cost ?? root.cost),
    pnlPct: num(d.pnl_pct),
    stop: num(d.stop_loss_price ?? d.stop ?? d.stop_loss),
    targets,
    candidates,
    dataStatus: str(d.data_status ?? root.data_status),
    asOf: str(d.as_of ?? root.as_of ?? d.latest_date ?? root.latest_date),
  };
}

export const MISSING = "—";

/** `n` to `digits` decimals, without a "-0.00". */
function fixed(n: number, digits: number): string {
  const s = n.toFixed(digits);
  return /^-0\.?0*$/.test(s) ? s.slice(1) : s;
}

/** A price: two decimals, "—" when unknown. */
export function formatPrice(n: number | null): string {
  return n === null ? MISSING : fixed(n, 2);
}

/** A percentage with its sign: two decimals, one from 100 % up; "—" when unknown. */
export function formatPct(n: number | null): string {
  if (n === null) return MISSING;
  const s = fixed(n, Math.abs(n) >= 100 ? 1 : 2);
  return `${Number(s) > 0 ? "+" : ""}${s}%`;
}

// The engine writes its labels in Chinese; the English UI shows them translated. Labels
// not listed here are shown as they came.
const EN_LABELS: Record<string, string> = {
  "🟢健康": "🟢 Healthy",
  "🟡警戒": "🟡 Caution",
  "🔴危险": "🔴 Danger",
  多头排列: "Bullish alignment",
  空头排列: "Bearish alignment",
  "MA50>MA200(偏强)": "MA50 > MA200 (firm)",
  "MA50<MA200(偏弱)": "MA50 < MA200 (soft)",
  数据不足: "Not enough data",
  主升通道: "Main uptrend",
  潜伏通道: "Latent",
  吸筹通道: "Accumulation",
  地量蓄势: "Dry-volume build-up",
  暗中护盘: "Hidden support",
  趋势延续: "Trend continuation",
  加速突破: "Accelerating breakout",
  点火破局: "Ignition breakout",
  未入选: "Not selected",
  // diagnosis_brief labels and per-holding errors of the portfolio tool
  回避: "Avoid",
  警戒观察: "Caution, watch only",
  重点观察: "Priority watch",
  触发观察: "Trigger watch",
  观察: "Watch",
  无行情数据: "No market data",
};

/** An engine label in the UI language (channel combinations like "潜伏通道+吸筹通道" part by part). */
export function engineLabel(label: string | null, lang: Language): string | null {
  if (label === null || lang === "zh") return label;
  const en = (s: string) => (Object.hasOwn(EN_LABELS, s) ? EN_LABELS[s] : null);
  return en(label) ?? label.split("+").map((part) => en(part) ?? part).join(" + ");
}
