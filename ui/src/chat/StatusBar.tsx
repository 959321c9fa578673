import type { Usage } from "../bindings";
import { useT } from "../i18n";
import { formatCost } from "./cost";
import type { TurnView } from "./reducer";

export function formatTokens(n: number): string {
  return n >= 10000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

/** What an always-allow key covers, as the approval dialog worded it: `exec_command:git`
 * (the gate's key for one base command) reads "git …"; any other key is the tool's name. */
export function allowedLabel(key: string): string {
  const base = /^exec_command:(.+)$/.exec(key);
  return base ? `${base[1]} …` : key;
}

export default function StatusBar({
  turn,
  conversation,
  turnCost = null,
  conversationCost = null,
  allowed = [],
  onRevoke = () => {},
}: {
  turn: TurnView | null;
  conversation: Usage;
  /** USD estimates; null when a price is unknown (then nothing is shown). */
  turnCost?: number | null;
  conversationCost?: number | null;
  /** Tools always allowed in this conversation's session, each revocable. */
  allowed?: string[];
  onRevoke?: (tool: string) => void;
}) {
  const t = useT();
  const model = turn?.model;
  const tier = model?.tier === "heavy" ? "🧠" : model?.tier === "light" ? "⚡" : "";
  return (
    <footer className="status-bar" id="status-bar">
      <span id="status-model">
        {model ? `${tier ? `${tier} ` : ""}${model.provider}/${model.model}` : t("statusIdle")}
      </span>
      {turn && (
        <span id="status-turn-tokens">
          {t("statusTurn")} ↑{formatTokens(turn.usage.input_tokens)} ↓{formatTokens(turn.usage.output_tokens)}
        </span>
      )}
      {turn && turnCost !== null && (
        <span id="status-turn-cost" className="cost" title={t("costHint")}>
          {formatCost(turnCost)}
        </span>
      )}
      <span id="status-conv-tokens">
        {t("statusConversation")} ↑{formatTokens(conversation.input_tokens)} ↓{formatTokens(conversation.output_tokens)}
      </span>
      {conversationCost !== null && (
        <span id="status-conv-cost" className="cost" title={t("costHint")}>
          {formatCost(conversationCost)}
        </span>
      )}
      {turn && turn.retries > 0 && (
        <span className="warn" id="status-retry">⚠ {t("statusRetry", { n: turn.retries })}</span>
      )}
      {turn?.fallback && (
        <span className="warn" id="status-fallback" title={turn.fallback.reason}>
          ⚡ {turn.fallback.from} → {turn.fallback.to}
        </span>
      )}
      {allowed.length > 0 && (
        <span id="always-allowed" className="always-allowed" title={t("alwaysAllowedHint")}>
          {t("alwaysAllowed")}:
          {allowed.map((tool) => (
            <span key={tool} className="always-allowed-tool" data-tool={tool}>
              <code>{allowedLabel(tool)}</code>
              <button
                type="button"
                className="always-allowed-revoke"
                title={t("alwaysAllowedRevoke", { tool: allowedLabel(tool) })}
                aria-label={t("alwaysAllowedRevoke", { tool: allowedLabel(tool) })}
                onClick={() => onRevoke(tool)}
              >
                ✕
              </button>
            </span>
          ))}
        </span>
      )}
    </footer>
  );
}
