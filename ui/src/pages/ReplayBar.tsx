// The stock page's replay controls: a start date, step a bar (→ key) or
// a week, play/pause, leave; in training, the newest bar's label and the score so far.
import { useState } from "react";
import { useMarketText } from "./marketText";
import { isoDate } from "./stockModel";
import { TRAINING_LABELS, atEnd, type Cursor, type Score, type TrainingLabel, type TrainingSession } from "./replayModel";

type Props = {
  cursor: Cursor | null;
  playing: boolean;
  training: boolean;
  /** The label on the newest bar, if the trainee put one. */
  guess: TrainingLabel | null;
  score: Score;
  past: TrainingSession[];
  /** A default start date (YYYY-MM-DD) for the form. */
  defaultStart: string;
  /** Refused when the date is not within the bars: the bar says why. */
  onStart: (isoStart: string) => boolean;
  onExit: () => void;
  onStepBar: () => void;
  onStepWeek: () => void;
  onPlay: (on: boolean) => void;
  onTraining: (on: boolean) => void;
  onGuess: (label: TrainingLabel) => void;
};

export default function ReplayBar(p: Props) {
  const t = useMarketText();
  const [start, setStart] = useState(p.defaultStart);
  const [bad, setBad] = useState(false);

  if (!p.cursor) {
    return (
      <form
        className="replay-bar"
        id="replay-form"
        onSubmit={(e) => {
          e.preventDefault();
          setBad(!p.onStart(start));
        }}
      >
        <strong>{t("replay")}</strong>
        <label>
          {t("replayStart")} <input id="replay-start" value={start} onChange={(e) => setStart(e.target.value)} placeholder="YYYY-MM-DD" size={11} />
        </label>
        <button id="replay-begin" type="submit">
          {t("replayBegin")}
        </button>
        {bad && (
          <span className="error" id="replay-bad-start" role="alert">
            {t("replayBadStart")}
          </span>
        )}
      </form>
    );
  }

  const c = p.cursor;
  const end = atEnd(c);
  return (
    <div className="replay-bar active" id="replay-bar" data-cursor={c.dates[c.index]}>
      <span id="replay-at">
        {end ? t("replayEnd") : t("replayAt").replace("{date}", isoDate(c.dates[c.index])).replace("{i}", String(c.index + 1)).replace("{n}", String(c.dates.length))}
      </span>
      <button id="replay-step" disabled={end} onClick={p.onStepBar} title="→">
        {t("replayStepBar")}
      </button>
      <button id="replay-week" disabled={end} onClick={p.onStepWeek}>
        {t("replayStepWeek")}
      </button>
      <button id="replay-play" disabled={end && !p.playing} aria-pressed={p.playing} onClick={() => p.onPlay(!p.playing)}>
        {p.playing ? t("replayPause") : t("replayPlay")}
      </button>
      <label className="inline">
        <input type="checkbox" id="replay-training" checked={p.training} onChange={(e) => p.onTraining(e.target.checked)} />
        {t("training")}
      </label>
      <button id="replay-exit" onClick={p.onExit}>
        {t("replayExit")}
      </button>
      {p.training && (
        <div className="replay-training" id="replay-training-panel">
          <span>{t("trainingAsk")}</span>
          <span className="replay-labels" role="group" aria-label={t("trainingAsk")}>
            {TRAINING_LABELS.map((l) => (
              <button key={l} className={`replay-label${p.guess === l ? " active" : ""}`} data-label={l} aria-pressed={p.guess === l} onClick={() => p.onGuess(l)}>
                {l === "none" ? t("trainingNone") : l}
              </button>
            ))}
          </span>
          <span id="replay-score" data-hits={p.score.hits} data-misses={p.score.misses} data-pending={p.score.pending}>
            {t("trainingScore").replace("{hits}", String(p.score.hits)).replace("{misses}", String(p.score.misses)).replace("{pending}", String(p.score.pending))}
          </span>
          {p.past.length > 0 && (
            <span className="muted" id="replay-past">
              {t("trainingPast")}: {p.past
                .slice(0, 3)
                .map((s) => `${s.code} ${s.hits}/${s.hits + s.misses}`)
                .join(" · ")}
            </span>
          )}
        </div>
      )}
      <p className="muted replay-note">{t("replayNote")}</p>
    </div>
  );
}
