import { useState } from "react";
import type { ModelEntry, ProviderKind, Settings } from "../bindings";
import { useT } from "../i18n";

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

interface Props {
  settings: Settings;
  onChange: (s: Settings) => void;
}

/** Models the agent can use, and which one is the main model. Keys are set below, per vendor. */
export default function ModelsPanel({ settings, onChange }: Props) {
  const t = useT();
  const [provider, setProvider] = useState<ProviderKind>("deepseek");
  const [model, setModel] = useState(DEFAULT_MODEL.deepseek);
  const [baseUrl, setBaseUrl] = useState("");
  const [id, setId] = useState("deepseek");

  const add = () => {
    const entry: ModelEntry = {
      id: id.trim(),
      provider,
      model: model.trim(),
      base_url: baseUrl.trim() === "" ? null : baseUrl.trim(),
      context_window: null,
      input_price_per_mtok: null,
      output_price_per_mtok: null,
    };
    const models = [...settings.models, entry];
    onChange({ ...settings, models, main_model: settings.main_model ?? entry.id });
  };
  /** Sets one price of an entry (USD per million tokens; empty = unknown). */
  const setPrice = (mid: string, key: "input_price_per_mtok" | "output_price_per_mtok", text: string) => {
    const value = text.trim() === "" ? null : Number(text);
    onChange({
      ...settings,
      models: settings.models.map((m) => (m.id === mid ? { ...m, [key]: value !== null && Number.isFinite(value) ? value : null } : m)),
    });
  };
  const remove = (mid: string) => {
    onChange({
      ...settings,
      models: settings.models.filter((m) => m.id !== mid),
      main_model: settings.main_model === mid ? null : settings.main_model,
      light_model: settings.light_model === mid ? null : settings.light_model,
      fallback_models: settings.fallback_models.filter((f) => f !== mid),
    });
  };

  return (
    <section className="card" id="models-panel">
      <h2>{t("models")}</h2>
      {settings.models.length > 0 && (
        <table className="models">
          <tbody>
            {settings.models.map((m) => (
              <tr key={m.id}>
                <td>
                  <label className="inline">
                    <input type="radio" name="main" checked={settings.main_model === m.id} onChange={() => onChange({ ...settings, main_model: m.id })} />
                    {m.id}
                  </label>
                </td>
                <td>{m.provider}</td>
                <td>{m.model}</td>
                <td>{m.base_url ?? ""}</td>
                <td className="prices">
                  <input
                    id={`model-price-in-${m.id}`}
                    className="price"
                    type="number"
                    min={0}
                    step="any"
                    value={m.input_price_per_mtok ?? ""}
                    placeholder={t("priceInput")}
                    title={t("priceHint")}
                    aria-label={`${m.id}: ${t("priceInput")}`}
                    onChange={(e) => setPrice(m.id, "input_price_per_mtok", e.target.value)}
                  />
                  <input
                    id={`model-price-out-${m.id}`}
                    className="price"
                    type="number"
                    min={0}
                    step="any"
                    value={m.output_price_per_mtok ?? ""}
                    placeholder={t("priceOutput")}
                    title={t("priceHint")}
                    aria-label={`${m.id}: ${t("priceOutput")}`}
                    onChange={(e) => setPrice(m.id, "output_price_per_mtok", e.target.value)}
                  />
                </td>
                <td>
                  <button type="button" onClick={() => remove(m.id)}>
                    {t("keyDelete")}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="row add-model">
        <select
          id="model-provider"
          value={provider}
          onChange={(e) => {
            const p = e.target.value as ProviderKind;
            setProvider(p);
            setModel(DEFAULT_MODEL[p]);
            setId(p.replace("_", "-"));
          }}
        >
          {PROVIDERS.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
        <input id="model-id" value={id} onChange={(e) => setId(e.target.value)} placeholder="id" />
        <input id="model-name" value={model} onChange={(e) => setModel(e.target.value)} placeholder="model" />
        <input id="model-base-url" value={baseUrl} onChange={(e) => setBaseUrl(e.target.value)} placeholder="base URL" />
        <button id="model-add" type="button" onClick={add} disabled={id.trim() === "" || model.trim() === ""}>
          {t("addModel")}
        </button>
      </div>
      <p className="hint">{t("modelsHint")}</p>
    </section>
  );
}
