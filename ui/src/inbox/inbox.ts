// The approval inbox and the approval log, the parts without React: times in Beijing time,
// who asked and who decided in words, error wording. Text goes through `t` (i18n.ts).
import type { AuditDecision, CommandError, Decider, InboxStatus, Value } from "../bindings";
import type { MessageKey } from "../i18n";

export type Translate = (key: MessageKey, vars?: Record<string, string | number>) => string;

const pad = (n: number) => String(n).padStart(2, "0");

/** An RFC 3339 instant as Beijing `YYYY-MM-DD HH:MM` (UTC+8 all year); the text as given
 * when it is not a time. */
export function beijingTime(rfc3339: string): string {
  const ms = Date.parse(rfc3339);
  if (Number.isNaN(ms)) return rfc3339;
  const d = new Date(ms + 8 * 3600_000);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
}

/** When a pending request expires: the time, and how long is left (whole minutes, rounded
 * down; "expired" from the expiry on). */
export function expiresText(expiresAt: string, now: number, t: Translate): string {
  const at = beijingTime(expiresAt);
  const left = Date.parse(expiresAt) - now;
  if (Number.isNaN(left)) return t("inboxExpiresAt", { at });
  if (left <= 0) return t("inboxExpiredAt", { at });
  const minutes = Math.floor(left / 60_000);
  const left_text =
    minutes >= 60 ? t("inboxHoursMinutes", { h: Math.floor(minutes / 60), m: minutes % 60 }) : t("inboxMinutes", { m: minutes });
  return t("inboxExpiresIn", { at, left: left_text });
}

/** `schedule:NAME` → "定时任务 NAME"; `conversation` → a headless run; anything else as is. */
export function requesterText(requestedBy: string, t: Translate): string {
  if (requestedBy.startsWith("schedule:")) return t("inboxBySchedule", { name: requestedBy.slice("schedule:".length) });
  if (requestedBy === "conversation") return t("inboxByConversation");
  if (requestedBy.startsWith("bot:")) return t("inboxByBot", { name: requestedBy.slice("bot:".length) });
  return requestedBy;
}

export function deciderText(by: Decider, t: Translate): string {
  switch (by.type) {
    case "dialog":
      return t("inboxDeciderDialog");
    case "always_allow":
      return t("inboxDeciderAlwaysAllow");
    case "policy":
      return t("inboxDeciderPolicy", { approve: by.approve });
    case "cli":
      return t("inboxDeciderCli");
    case "app":
      return t("inboxDeciderApp");
    case "expiry":
      return t("inboxDeciderExpiry");
    case "bot":
      return t("inboxDeciderBot", { bot: by.bot, sender: by.label || by.sender });
  }
}

const STATUS_KEYS: Record<InboxStatus, MessageKey> = {
  pending: "inboxStatusPending",
  allowed: "inboxStatusAllowed",
  denied: "inboxStatusDenied",
  expired: "inboxStatusExpired",
};

export function statusText(status: InboxStatus, t: Translate): string {
  return t(STATUS_KEYS[status]);
}

const DECISION_KEYS: Record<AuditDecision, MessageKey> = {
  allowed: "inboxDecisionAllowed",
  allowed_always: "inboxDecisionAllowedAlways",
  edited: "inboxDecisionEdited",
  denied: "inboxDecisionDenied",
  timed_out: "inboxDecisionTimedOut",
  queued: "inboxDecisionQueued",
  expired: "inboxDecisionExpired",
};

export function decisionText(decision: AuditDecision, t: Translate): string {
  return t(DECISION_KEYS[decision]);
}

/** Arguments on one line, cut at `max` characters (the full text is a hover away). */
export function argsLine(args: Value, max = 120): string {
  const text = JSON.stringify(args) ?? "null";
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A failed answer in words: the backend's message says which request and why. */
export function inboxErrorText(e: CommandError, t: Translate): string {
  switch (e.kind) {
    case "not_found":
      return t("inboxErrNotFound", { message: e.message });
    case "conflict":
      return t("inboxErrAlreadyDecided", { message: e.message });
    case "expired":
      return t("inboxErrExpired", { message: e.message });
    // An allowed call that cannot run now: the request is still pending.
    case "busy":
      return t("inboxErrNotRun", { message: e.message });
    // The preview changed: the reloaded request shows the new one.
    case "stale":
      return t("inboxErrPreviewChanged");
    default:
      return e.message;
  }
}

/** A denial's reason as sent: blank means none. */
export function reasonOrNull(text: string): string | null {
  const r = text.trim();
  return r ? r : null;
}
