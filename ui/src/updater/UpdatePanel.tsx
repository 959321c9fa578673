// Settings → About and updates: the running version, a check against the update server,
// the new version's notes, its download with progress, the signature's verdict, and a
// restart into the installed version. The notes come from the (unsigned) manifest, so
// they are shown as plain text. The sidebar's update notice opens this same panel with what
// the automatic check found (`initial`), so the notes and the install button are one code.
import { useContext, useEffect, useState } from "react";
import { Channel } from "@tauri-apps/api/core";
import { commands, type Refusal, type UpdateCheck, type UpdateProgress } from "../bindings";
import { LanguageContext } from "../i18n";
import { updateText } from "./text";

type Phase =
  | { kind: "idle" }
  | { kind: "checking" }
  | { kind: "checked"; check: UpdateCheck }
  | { kind: "installing"; check: UpdateCheck; progress: UpdateProgress | null }
  | { kind: "installed"; version: string }
  | { kind: "refused"; version: string; why: Refusal; reason: string };

function bytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : `${Math.round(n / 1024)} KB`;
}

export default function UpdatePanel({ initial, id = "update-panel" }: { initial?: UpdateCheck; id?: string } = {}) {
  const t = updateText(useContext(LanguageContext));
  const [version, setVersion] = useState<string | null>(null);
  const [phase, setPhase] = useState<Phase>(initial ? { kind: "checked", check: initial } : { kind: "idle" });
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    void commands.appInfo().then((info) => {
      if (live) setVersion(info.version);
    });
    return () => {
      live = false;
    };
  }, []);

  const check = async () => {
    setError(null);
    setPhase({ kind: "checking" });
    const res = await commands.checkForUpdate();
    if (res.status === "ok") {
      setPhase({ kind: "checked", check: res.data });
    } else {
      setPhase({ kind: "idle" });
      setError(t("failed", { message: res.error.message }));
    }
  };

  const install = async (check: UpdateCheck, target: string) => {
    setError(null);
    setPhase({ kind: "installing", check, progress: null });
    const channel = new Channel<UpdateProgress>();
    channel.onmessage = (progress) => setPhase({ kind: "installing", check, progress });
    const res = await commands.installUpdate(target, channel);
    if (res.status === "error") {
      setPhase({ kind: "checked", check });
      setError(t("failed", { message: res.error.message }));
      return;
    }
    const outcome = res.data;
    if (outcome.type === "installed") setPhase({ kind: "installed", version: outcome.version });
    else if (outcome.type === "refused") setPhase({ kind: "refused", version: outcome.version, why: outcome.why, reason: outcome.reason });
    else {
      setPhase({ kind: "idle" });
      setError(t("gone"));
    }
  };

  const whyText = (why: Refusal): string => {
    switch (why.type) {
      case "bad_signature":
        return t("whyBadSignature");
      case "version_mismatch":
        return t("whyVersionMismatch", { signed: why.signed });
      case "unsigned_version":
        return t("whyUnsignedVersion");
      case "malformed":
        return t("whyMalformed");
    }
  };

  const progressText = (p: UpdateProgress | null): string => {
    if (!p || p.type === "downloading") {
      const done = bytes(p?.downloaded ?? 0);
      return p?.total ? t("downloadingOf", { done, total: bytes(p.total) }) : t("downloading", { done });
    }
    return t("verifying");
  };

  const shown = phase.kind === "checked" || phase.kind === "installing" ? phase.check : null;
  const available = shown?.available ?? null;

  return (
    <section className="card" id={id}>
      <h2>{t("title")}</h2>
      {version && <p id="update-current">{t("version", { version })}</p>}
      <p className="hint">{t("signedNote")}</p>
      <div className="actions">
        <button id="update-check" type="button" disabled={phase.kind === "checking" || phase.kind === "installing"} onClick={() => void check()}>
          {phase.kind === "checking" ? t("checking") : t("check")}
        </button>
      </div>
      {shown && !available && (
        <p id="update-status" role="status">
          {shown.server_configured ? t("upToDate") : t("noServer")}
        </p>
      )}
      {shown && available && (
        <div id="update-available">
          <p id="update-status" role="status">
            <strong>{t("available", { version: available.version })}</strong>
            {available.date && <> · {t("released", { date: available.date.slice(0, 10) })}</>}
          </p>
          {available.notes && (
            <>
              <h3>{t("notes")}</h3>
              <p id="update-notes" style={{ whiteSpace: "pre-wrap" }}>
                {available.notes}
              </p>
            </>
          )}
          {shown.can_install ? (
            phase.kind === "installing" ? (
              <p id="update-progress" role="status">
                {progressText(phase.progress)}
              </p>
            ) : (
              <button id="update-install" className="primary" type="button" onClick={() => void install(shown, available.version)}>
                {t("install")}
              </button>
            )
          ) : (
            <p id="update-cannot-install" className="hint">
              {t("cannotInstall", { note: shown.install_note ?? "" })}
            </p>
          )}
        </div>
      )}
      {phase.kind === "installed" && (
        <div className="actions">
          <span id="update-installed" className="ok" role="status">
            {t("installed", { version: phase.version })}
          </span>
          <button id="update-restart" className="primary" type="button" onClick={() => void commands.restartApp()}>
            {t("restart")}
          </button>
        </div>
      )}
      {phase.kind === "refused" && (
        <p id="update-refused" className="notice error" role="alert" title={phase.reason}>
          {t("refused", { version: phase.version, reason: whyText(phase.why) })}
        </p>
      )}
      {error && (
        <p id="update-error" className="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
