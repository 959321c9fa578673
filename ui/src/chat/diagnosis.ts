// Recognises a stock diagnosis among tool results so it can be shown as a card.
import type { Value } from "../bindings";

export interface Diagnosis {
  code: string | null;
  name: string | null;
  health: string | null;
  maPattern: string | null;
  l2Channel: string | null;
  triggers: string[];
  stop: string | null;
  targets: string[];
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

function list(v: Value | undefined): string[] {
  if (v === null || v === undefined) return [];
  if (Array.isArray(v)) return v.map((x) => str(x) ?? "").filter((s) => s !== "");
  if (isObj(v)) {
    // e.g. targets {t1: 12.5, t2: 13.8, …}: one "key value" entry per set field.
    return Object.entries(v)
      .filter(([, x]) => x !== null && typeof x !== "object")
      .map(([k, x]) => `${k} ${String(x)}`);
  }
  const s = str(v);
  return s ? [s] : [];
}

/** The diagnosis inside a tool result (the result itself or its `diagnosis` field), or
 * null when the result is not one. */
export function asDiagnosis(result: Value | null): Diagnosis | null {
  if (!isObj(result ?? null)) return null;
  const root = result as Obj;
  const d = isObj(root.diagnosis) ? root.diagnosis : root;
  if (!("health" in d) && !("ma_pattern" in d) && !("l2_channel" in d)) return null;
  return {
    code: str(d.code ?? root.code),
    name: str(d.name ?? root.name),
    health: str(d.health),
    maPattern: str(d.ma_pattern),
    l2Channel: str(d.l2_channel),
    triggers: list(d.l4_triggers ?? d.triggers),
    stop: str(d.stop_loss_price ?? d.stop ?? d.stop_loss),
    targets: list(d.targets),
    dataStatus: str(d.data_status ?? root.data_status),
    asOf: str(d.as_of ?? root.as_of ?? d.latest_date ?? root.latest_date),
  };
}
