// The five long-term memory types (wyckoff_memory::MemoryType, as the IPC spells them).
import type { MessageKey } from "./i18n";

export const MEMORY_TYPES = ["preference", "session", "stock_opinion", "decision", "market_view"] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

export function isMemoryType(s: string): s is MemoryType {
  return (MEMORY_TYPES as readonly string[]).includes(s);
}

/** The type's name in the UI language; an unknown type is shown as it came. */
export function memoryTypeLabel(type: string, t: (key: MessageKey) => string): string {
  return isMemoryType(type) ? t(`memType_${type}`) : type;
}
