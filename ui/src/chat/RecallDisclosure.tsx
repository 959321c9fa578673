import type { RecalledItem } from "../bindings";
import { useT } from "../i18n";
import { memoryTypeLabel } from "../memoryTypes";

/** "What the agent remembered this turn": collapsed under the turn's reply; nothing when
 * no memory was recalled. */
export default function RecallDisclosure({ items }: { items: RecalledItem[] }) {
  const t = useT();
  if (items.length === 0) return null;
  return (
    <details className="recall-disclosure">
      <summary>🧠 {items.length === 1 ? t("recallSummaryOne") : t("recallSummary", { n: items.length })}</summary>
      <ul className="recall-list">
        {items.map((m) => (
          <li key={m.id} className="recall-item" data-id={m.id} data-type={m.memory_type}>
            <span className={`badge memory-type type-${m.memory_type}`}>{memoryTypeLabel(m.memory_type, t)}</span>
            <span className="recall-date">{m.date}</span>
            <span className="recall-content">{m.content}</span>
          </li>
        ))}
      </ul>
    </details>
  );
}
