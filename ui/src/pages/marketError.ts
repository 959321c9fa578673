// A market command's error in the words the stock page, the minute panel and the chat's
// inline chart show (kept apart from the stock page so the chat need not load it).
import type { CommandError } from "../bindings";

export function marketErrorText(e: CommandError | string): string {
  // IPC-level failures (bad arguments, a panic) arrive as a bare string.
  if (typeof e === "string") return e;
  // An unknown code, and a listed stock without bars (the message says why).
  if (e.code !== null && e.kind === "not_found") return `未知股票代码 / unknown stock code: ${e.code}`;
  if (e.code !== null && e.kind === "unavailable") return `${e.code}: ${e.message}`;
  return e.message;
}
