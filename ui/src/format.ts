import type { CommandError, ErrorKind, SecretId, SettingsError, KeySource } from "./bindings";
import type { MessageKey } from "./i18n";

type T = (key: MessageKey, vars?: Record<string, string | number>) => string;

/** A stable DOM-friendly slug for a secret, e.g. "anthropic", "tushare", "custom-my-llm". */
export function secretSlug(id: SecretId): string {
  switch (id.kind) {
    case "provider":
      return id.vendor;
    case "data_source":
      return id.source;
    case "custom":
      return `custom-${id.id}`;
  }
}

export function secretLabel(id: SecretId, t: T): string {
  switch (id.kind) {
    case "provider":
      return t(`vendor_${id.vendor}` as MessageKey);
    case "data_source":
      return t(`data_${id.source}` as MessageKey);
    case "custom":
      return `${t("custom")}: ${id.id}`;
  }
}

export function sourceLabel(source: KeySource, t: T): string {
  switch (source) {
    case "keychain":
      return t("srcKeychain");
    case "environment":
      return t("srcEnvironment");
    case "session":
      return t("srcSession");
  }
}

export function settingsErrorText(err: SettingsError, t: T): string {
  switch (err.type) {
    case "out_of_range":
      return t("errOutOfRange", { field: err.field, min: err.min, max: err.max, got: err.got });
    case "invalid":
      return t("errInvalid", { field: err.field, reason: err.reason });
    case "newer_version":
      return `settings version ${err.found} > ${err.supported}`;
    case "corrupt":
      return `${err.path}: ${err.reason}`;
    case "io":
      return `${err.path}: ${err.reason}`;
  }
}

/** The message of a chat/memory command error (a busy conversation in the user's words). */
export function chatErrorText(err: CommandError, t: T): string {
  return err.kind === "busy" ? t("errBusy") : err.message;
}

const ERROR_KIND_LABELS: Record<ErrorKind, MessageKey> = {
  authentication: "errKind_authentication",
  permission: "errKind_permission",
  rate_limit: "errKind_rate_limit",
  overloaded: "errKind_overloaded",
  context_too_long: "errKind_context_too_long",
  invalid_request: "errKind_invalid_request",
  timeout: "errKind_timeout",
  network: "errKind_network",
  server: "errKind_server",
  protocol: "errKind_protocol",
  cancelled: "errKind_cancelled",
  internal: "errKind_internal",
};

/** A classified failure in words; `null` (no request was made: a missing key, a bad
 * setting) reads as a setup problem. A kind newer than this UI is shown as it came. */
export function errorKindLabel(kind: ErrorKind | null, t: T): string {
  if (kind === null) return t("errKind_setup");
  return Object.hasOwn(ERROR_KIND_LABELS, kind) ? t(ERROR_KIND_LABELS[kind]) : kind;
}
