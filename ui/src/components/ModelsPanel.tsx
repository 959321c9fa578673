import { useEffect, useRef, useState } from "react";
import { commands, type ConnectionFailed, type ConnectionOk, type ModelEntry, type ProviderKind, type Settings } from "../bindings";
import { Spinner } from "../chat/ToolCardView";
import { errorKindLabel } from "../format";
import { useT, type MessageKey } from "../i18n";

const PROVIDERS: ProviderKind[] = ["claude", "openai", "gemini", "deepseek", "qwen", "kimi", "ollama", "openai_compatible"];

const DEFAULT_MODEL: Record<ProviderKind, string> = {
  claude: "claude-sonnet-4-5",
  openai: "gpt-4o",
  gemini: "gemini-2.5-flash",
  deepseek: "deepseek-chat",
  qwen: "qwen-plus",
  kimi: "kimi-k2-0905-preview",
  ollama: "qwen2.5:7b",
  openai_compatible: "",
};

/** A local Ollama serves its OpenAI-compatible API here. */
export const OLLAMA_BASE_URL = "http://127.0.0.1:11434/v1";

/** What the backend accepts as an entry id. */
const ID_PATTERN = /^[a-z0-9_-]{1,64}$/;

type PriceField = "input_price_per_mtok" | "output_price_per_mtok";
const PRICE_FIELDS: { suffix: string; field: PriceField; label: MessageKey }[] = [
  { suffix: "in", field: "input_price_per_mtok", label: "priceInput" },
  { suffix: "out", field: "output_price_per_mtok", label: "priceOutput" },
];

type T = (key: MessageKey, vars?: Record<string, string | number>) => string;

export function providerLabel(p: ProviderKind, t: T): string {
  const key: MessageKey = `provider_${p}`;
  return t(key);
}

/** Whether a context window override is unusable (empty/null means automatic). */
export function contextWindowInvalid(v: number | null): boolean {
  return v !== null && !(Number.isInteger(v) && v > 0);
}

/** The first problem in the models that must be fixed before saving, or null. */
export function modelsProblem(settings: Settings, t: T): string | null {
  const bad = settings.models.find((m) => contextWindowInvalid(m.context_window));
  return bad ? `${bad.id}: ${t("contextInvalid")}` : null;
}

/** Why the add form cannot add this entry, or null. */
function addProblem(models: ModelEntry[], id: string, provider: ProviderKind, baseUrl: string, t: T): string | null {
  if (models.some((m) => m.id === id)) return t("errDuplicateId", { id });
  if (!ID_PATTERN.test(id)) return t("errBadId");
  if (baseUrl === "" && provider === "openai_compatible") return t("errBaseUrlRequired");
  if (baseUrl !== "" && !/^https?:\/\/\S+$/.test(baseUrl)) return t("errBaseUrlScheme");
  return null;
}

type TestState = { state: "running" } | { state: "ok"; data: ConnectionOk } | { state: "failed"; error: ConnectionFailed };

interface Props {
  settings: Settings;
  onChange: (s: Settings) => void;
}

/** Models the agent can use: the main model, an optional light model for simple turns and
 * the fallback order. Keys are set below, per vendor. */
export default function ModelsPanel({ settings, onChange }: Props) {
  const t = useT();
  const [provider, setProvider] = useState<ProviderKind>("deepseek");
  const [model, setModel] = useState(DEFAULT_MODEL.deepseek);
  const [baseUrl, setBaseUrl] = useState("");
  const [id, setId] = useState("deepseek");
  const [addError, setAddError] = useState<string | null>(null);
  const [tests, setTests] = useState<Record<string, TestState>>({});
  // The latest test run per entry: an answer to an older run (or for a removed entry) is dropped.
  const runs = useRef<Record<string, number>>({});
  const mounted = useRef(true);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);

  const main = settings.main_model;
  const others = settings.models.filter((m) => m.id !== main);
  const fallbacks = settings.fallback_models.filter((f) => f !== main);
  const fallbackCandidates = others.filter((m) => !fallbacks.includes(m.id));
  const light = settings.light_model !== null && others.some((m) => m.id === settings.light_model) ? settings.light_model : "";

  const add = () => {
    const entryId = id.trim();
    const url = baseUrl.trim();
    const problem = addProblem(settings.models, entryId, provider, url, t);
    setAddError(problem);
    if (problem) return;
    const entry: ModelEntry = {
      id: entryId,
      provider,
      model: model.trim(),
      base_url: url === "" ? null : url,
      context_window: null,
      input_price_per_mtok: null,
      output_price_per_mtok: null,
    };
    const models = [...settings.models, entry];
    onChange({ ...settings, models, main_model: settings.main_model ?? entry.id });
  };

  const updateEntry = (mid: string, patch: Partial<ModelEntry>) => {
    onChange({ ...settings, models: settings.models.map((m) => (m.id === mid ? { ...m, ...patch } : m)) });
  };

  /** Sets one price of an entry (USD per million tokens; empty = unknown). */
  const setPrice = (mid: string, key: PriceField, text: string) => {
    const value = text.trim() === "" ? null : Number(text);
    updateEntry(mid, { [key]: value !== null && Number.isFinite(value) ? value : null });
  };

  /** Empty means automatic; anything else is kept as typed so the field shows what is
   * wrong with it (saving is refused until it is fixed). */
  const setContext = (mid: string, text: string) => {
    updateEntry(mid, { context_window: text.trim() === "" ? null : Number(text) });
  };

  /** The main model is never the light model nor a fallback. */
  const setMain = (mid: string) => {
    onChange({
      ...settings,
      main_model: mid,
      light_model: settings.light_model === mid ? null : settings.light_model,
      fallback_models: settings.fallback_models.filter((f) => f !== mid),
    });
  };

  const remove = (mid: string) => {
    delete runs.current[mid];
    setTests((prev) => {
      const next = { ...prev };
      delete next[mid];
      return next;
    });
    onChange({
      ...settings,
      models: settings.models.filter((m) => m.id !== mid),
      main_model: settings.main_model === mid ? null : settings.main_model,
      light_model: settings.light_model === mid ? null : settings.light_model,
      fallback_models: settings.fallback_models.filter((f) => f !== mid),
    });
  };

  const setFallbacks = (list: string[]) => onChange({ ...settings, fallback_models: list });
  const moveFallback = (index: number, by: -1 | 1) => {
    const to = index + by;
    if (to < 0 || to >= fallbacks.length) return;
    const list = [...fallbacks];
    [list[index], list[to]] = [list[to], list[index]];
    setFallbacks(list);
  };

  const test = async (entry: ModelEntry) => {
    const run = (runs.current[entry.id] ?? 0) + 1;
    runs.current[entry.id] = run;
    setTests((prev) => ({ ...prev, [entry.id]: { state: "running" } }));
    let next: TestState;
    try {
      const res = await commands.testConnection(entry);
      next = res.status === "ok" ? { state: "ok", data: res.data } : { state: "failed", error: res.error };
    } catch (e) {
      next = { state: "failed", error: { kind: "internal", message: String(e) } };
    }
    if (!mounted.current || runs.current[entry.id] !== run) return;
    setTests((prev) => ({ ...prev, [entry.id]: next }));
  };

  const urlRequired = provider === "openai_compatible";

  return (
    <section className="card" id="models-panel">
      <h2>{t("models")}</h2>
      {settings.models.length > 0 && (
        <ul className="model-list">
          {settings.models.map((m) => {
            const result = tests[m.id];
            const running = result?.state === "running";
            const ctxBad = contextWindowInvalid(m.context_window);
            return (
              <li key={m.id} className="model-entry" data-id={m.id}>
                <div className="model-head">
                  <label className="inline model-main" title={t("mainModelRadio")}>
                    <input type="radio" name="main" checked={main === m.id} onChange={() => setMain(m.id)} aria-label={`${m.id}: ${t("mainModelRadio")}`} />
                    <strong>{m.id}</strong>
                  </label>
                  <span className="model-provider">{providerLabel(m.provider, t)}</span>
                  <code className="model-name">{m.model}</code>
                  <span className="hint model-url">{m.base_url ?? t("baseUrlDefault")}</span>
                  <button type="button" className="model-remove" onClick={() => remove(m.id)}>
                    {t("keyDelete")}
                  </button>
                </div>
                <div className="model-details">
                  <label className="model-context" title={t("contextHint")}>
                    <span className="hint">{t("contextWindow")}</span>
                    <input
                      id={`model-context-${m.id}`}
                      className="context"
                      type="number"
                      min={1}
                      step={1}
                      value={m.context_window !== null && Number.isFinite(m.context_window) ? m.context_window : ""}
                      placeholder={t("contextAuto")}
                      aria-invalid={ctxBad}
                      aria-label={`${m.id}: ${t("contextWindow")}`}
                      onChange={(e) => setContext(m.id, e.target.value)}
                    />
                  </label>
                  <span className="prices">
                    {PRICE_FIELDS.map(({ suffix, field, label }) => (
                      <input
                        key={field}
                        id={`model-price-${suffix}-${m.id}`}
                        className="price"
                        type="number"
                        min={0}
                        step="any"
                        value={m[field] ?? ""}
                        placeholder={t(label)}
                        title={t("priceHint")}
                        aria-label={`${m.id}: ${t(label)}`}
                        onChange={(e) => setPrice(m.id, field, e.target.value)}
                      />
                    ))}
                  </span>
                  <button type="button" className="model-test" data-id={m.id} disabled={running} aria-busy={running} onClick={() => void test(m)}>
                    {running ? (
                      <>
                        <Spinner /> {t("testRunning")}
                      </>
                    ) : (
                      t("testConnection")
                    )}
                  </button>
                  {result && result.state !== "running" && (
                    <span
                      className={`model-test-result ${result.state === "ok" ? "ok" : "error"}`}
                      data-id={m.id}
                      data-ok={result.state === "ok" ? "true" : "false"}
                      role={result.state === "ok" ? "status" : "alert"}
                      title={result.state === "ok" ? result.data.reply : undefined}
                    >
                      {result.state === "ok" ? (
                        t("testOk", { model: result.data.model, ms: result.data.elapsed_ms })
                      ) : (
                        <>
                          <span className="test-kind" data-kind={result.error.kind ?? "setup"}>
                            {t("testFailed", { kind: errorKindLabel(result.error.kind, t) })}
                          </span>
                          <span className="test-message">{result.error.message}</span>
                        </>
                      )}
                    </span>
                  )}
                </div>
                {ctxBad && (
                  <div className="error model-context-error" id={`model-context-error-${m.id}`} role="alert">
                    {t("contextInvalid")}
                  </div>
                )}
              </li>
            );
          })}
        </ul>
      )}
      <div className="row add-model">
        <select
          id="model-provider"
          aria-label={t("modelProvider")}
          value={provider}
          onChange={(e) => {
            const p = e.target.value as ProviderKind;
            setProvider(p);
            setModel(DEFAULT_MODEL[p]);
            setId(p.replace("_", "-"));
            setBaseUrl(p === "ollama" ? OLLAMA_BASE_URL : "");
            setAddError(null);
          }}
        >
          {PROVIDERS.map((p) => (
            <option key={p} value={p}>
              {providerLabel(p, t)}
            </option>
          ))}
        </select>
        <input id="model-id" value={id} onChange={(e) => setId(e.target.value)} placeholder={t("modelIdPlaceholder")} aria-label="id" />
        <input id="model-name" value={model} onChange={(e) => setModel(e.target.value)} placeholder={t("modelNamePlaceholder")} aria-label={t("modelNamePlaceholder")} />
        <input
          id="model-base-url"
          className="base-url"
          value={baseUrl}
          aria-required={urlRequired}
          onChange={(e) => setBaseUrl(e.target.value)}
          placeholder={urlRequired ? t("baseUrlRequired") : t("baseUrlOptional")}
          aria-label="base URL"
        />
        <button id="model-add" type="button" onClick={add} disabled={id.trim() === "" || model.trim() === ""}>
          {t("addModel")}
        </button>
      </div>
      {addError && (
        <p className="error" id="model-add-error" role="alert">
          {addError}
        </p>
      )}
      <p className="hint">{t("modelsHint")}</p>
      <p className="hint">{t("testHint")}</p>

      <label className="field">
        <span>{t("lightModel")}</span>
        <select
          id="set-light-model"
          value={light}
          onChange={(e) => onChange({ ...settings, light_model: e.target.value === "" ? null : e.target.value })}
        >
          <option value="">{t("lightNone")}</option>
          {others.map((m) => (
            <option key={m.id} value={m.id}>
              {m.id} ({m.model})
            </option>
          ))}
        </select>
      </label>

      <div className="fallbacks">
        <span className="fallbacks-title">{t("fallbackTitle")}</span>
        <ol id="fallback-list" className="fallback-list">
          {fallbacks.map((f, i) => (
            <li key={f} className="fallback-item" data-id={f}>
              <span className="fallback-name">{f}</span>
              <button type="button" className="fallback-up" disabled={i === 0} onClick={() => moveFallback(i, -1)} title={t("fallbackUp")} aria-label={`${f}: ${t("fallbackUp")}`}>
                ↑
              </button>
              <button
                type="button"
                className="fallback-down"
                disabled={i === fallbacks.length - 1}
                onClick={() => moveFallback(i, 1)}
                title={t("fallbackDown")}
                aria-label={`${f}: ${t("fallbackDown")}`}
              >
                ↓
              </button>
              <button type="button" className="fallback-remove" onClick={() => setFallbacks(fallbacks.filter((x) => x !== f))} title={t("fallbackRemove")} aria-label={`${f}: ${t("fallbackRemove")}`}>
                ✕
              </button>
            </li>
          ))}
        </ol>
        {fallbacks.length === 0 && <p className="hint fallback-empty">{t("fallbackEmpty")}</p>}
        <select
          id="fallback-add"
          value=""
          disabled={fallbackCandidates.length === 0}
          aria-label={t("fallbackAdd")}
          onChange={(e) => {
            if (e.target.value !== "") setFallbacks([...fallbacks, e.target.value]);
          }}
        >
          <option value="">{t("fallbackAdd")}</option>
          {fallbackCandidates.map((m) => (
            <option key={m.id} value={m.id}>
              {m.id} ({m.model})
            </option>
          ))}
        </select>
      </div>
    </section>
  );
}
