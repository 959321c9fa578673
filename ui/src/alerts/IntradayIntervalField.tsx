// The settings' alerts section: how often the rules are checked on live quotes during
// the session. The backend validates the same range and names the field if it refuses.
import { INTERVAL_RANGE, intervalProblem, useAlertsText } from "./alerts";

export default function IntradayIntervalField({ value, onChange }: { value: number; onChange: (minutes: number) => void }) {
  const t = useAlertsText();
  const bad = Number.isFinite(value) && intervalProblem(value);
  return (
    <section className="card" id="settings-alerts">
      <h2>{t("intervalTitle")}</h2>
      <label className="field" htmlFor="set-intraday-minutes">
        <span>{t("intervalLabel")}</span>
        <input
          id="set-intraday-minutes"
          type="number"
          min={INTERVAL_RANGE[0]}
          max={INTERVAL_RANGE[1]}
          step={1}
          value={Number.isFinite(value) ? value : ""}
          aria-invalid={bad || !Number.isFinite(value)}
          onChange={(e) => onChange(e.target.valueAsNumber)}
        />
      </label>
      {bad && (
        <p className="hint error" id="set-intraday-minutes-problem" role="alert">
          {t("intervalRange")}
        </p>
      )}
      <p className="hint">{t("intervalHint")}</p>
    </section>
  );
}
