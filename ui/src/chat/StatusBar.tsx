import type { Usage } from "../bindings";
import { useT } from "../i18n";
import type { TurnView } from "./reducer";

export function formatTokens(n: number): string {
  return n >= 10000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

export default function StatusBar({ turn, conversation }: { turn: TurnView | null; conversation: Usage }) {
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
      <span id="status-conv-tokens">
        {t("statusConversation")} ↑{formatTokens(conversation.input_tokens)} ↓{formatTokens(conversation.output_tokens)}
      </span>
      {turn && turn.retries > 0 && (
        <span className="warn" id="status-retry">⚠ {t("statusRetry", { n: turn.retries })}</span>
      )}
      {turn?.fallback && (
        <span className="warn" id="status-fallback" title={turn.fallback.reason}>
          ⚡ {turn.fallback.from} → {turn.fallback.to}
        </span>
      )}
    </footer>
  );
}
