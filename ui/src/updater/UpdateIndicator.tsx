// The sidebar's notice that a newer signed version is announced ("新版本 0.2.0 可用"), from
// the automatic check (or the user's own in Settings). It shows nothing until a check finds
// one; a click opens the release notes and the install button in a dialog: the same
// UpdatePanel as Settings, started from what the check found. Nothing is downloaded or
// installed until the user clicks install there.
import { useContext, useEffect, useState } from "react";
import { createPortal } from "react-dom";
import { commands, events, type UpdateCheck } from "../bindings";
import { LanguageContext } from "../i18n";
import UpdatePanel from "./UpdatePanel";
import { updateText } from "./text";

export default function UpdateIndicator() {
  const t = updateText(useContext(LanguageContext));
  const [found, setFound] = useState<UpdateCheck | null>(null);
  const [open, setOpen] = useState(false);

  useEffect(() => {
    let live = true;
    // Listen first, then ask: a check that ends in between is still seen.
    const unlisten = events.updateFound.listen((e) => {
      if (live) setFound(e.payload.check);
    });
    void commands.pendingUpdate().then((check) => {
      if (live && check) setFound((prev) => prev ?? check);
    });
    return () => {
      live = false;
      void unlisten.then((f) => f());
    };
  }, []);

  const version = found?.available?.version;
  if (!found || !version) return null;
  return (
    <>
      <button id="update-indicator" type="button" className="update-indicator" title={t("indicatorTitle")} style={{ marginTop: "auto" }} onClick={() => setOpen(true)}>
        {t("indicator", { version })}
      </button>
      {open &&
        // Outside the sidebar, whose button styles would reach into the dialog.
        createPortal(
          <div className="modal-backdrop" onClick={() => setOpen(false)}>
            <div className="modal" role="dialog" aria-modal="true" aria-label={t("indicator", { version })} id="update-dialog" onClick={(e) => e.stopPropagation()}>
              <UpdatePanel initial={found} id="update-dialog-panel" />
              <div className="actions">
                <button id="update-dialog-close" type="button" onClick={() => setOpen(false)}>
                  {t("close")}
                </button>
              </div>
            </div>
          </div>,
          document.body,
        )}
    </>
  );
}
