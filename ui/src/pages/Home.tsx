// 概览: the overview of the market and the data, useful without a model; when no model is
// set, a small notice leads to Settings.
import type { AppInfo, SettingsView } from "../bindings";
import { useT } from "../i18n";
import Overview from "./Overview";

interface Props {
  view: SettingsView;
  info: AppInfo;
  onOpenSettings: () => void;
  onOpenStock: (code: string) => void;
  onAsk: (text: string) => void;
}

export default function Home({ view, info, onOpenSettings, onOpenStock, onAsk }: Props) {
  const t = useT();
  const main = view.settings.models.find((m) => m.id === view.settings.main_model);
  return (
    <section className="page" id="page-home">
      <h1>{t("navHome")}</h1>
      {main ? (
        <p className="hint">
          {t("homeModelReady")}: <strong>{main.id}</strong> ({main.provider} · {main.model})
        </p>
      ) : (
        <p className="notice" id="no-model">
          {t("homeNoModel")}{" "}
          <button className="link" onClick={onOpenSettings}>
            {t("homeGoSettings")}
          </button>
        </p>
      )}
      <Overview onOpenStock={onOpenStock} onAsk={onAsk} />
      <dl className="facts">
        <dt>{t("homeDataHome")}</dt>
        <dd id="data-home">{info.data_home}</dd>
        <dt>{t("homeVersion")}</dt>
        <dd>{info.version}</dd>
      </dl>
    </section>
  );
}
