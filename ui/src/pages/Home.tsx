import type { AppInfo, SettingsView } from "../bindings";
import { useT } from "../i18n";

interface Props {
  view: SettingsView;
  info: AppInfo;
  onOpenSettings: () => void;
}

export default function Home({ view, info, onOpenSettings }: Props) {
  const t = useT();
  const main = view.settings.models.find((m) => m.id === view.settings.main_model);
  return (
    <section className="page" id="page-home">
      <h1>{t("homeTitle")}</h1>
      <p className="lead">{t("homeIntro")}</p>
      {main ? (
        <p className="card">
          {t("homeModelReady")}: <strong>{main.id}</strong> ({main.provider} · {main.model})
        </p>
      ) : (
        <div className="card notice" id="no-model">
          <p>{t("homeNoModel")}</p>
          <button className="primary" onClick={onOpenSettings}>
            {t("homeGoSettings")}
          </button>
        </div>
      )}
      <dl className="facts">
        <dt>{t("homeDataHome")}</dt>
        <dd id="data-home">{info.data_home}</dd>
        <dt>{t("homeVersion")}</dt>
        <dd>{info.version}</dd>
      </dl>
    </section>
  );
}
