// Settings → General: the switch for the automatic update check. Saved with the other
// settings; the app reads it before every check, so turning it off needs no restart.
import { useContext } from "react";
import { LanguageContext } from "../i18n";
import { updateText } from "./text";

export default function AutoCheckField({ value, onChange }: { value: boolean; onChange: (on: boolean) => void }) {
  const t = updateText(useContext(LanguageContext));
  return (
    <label className="inline">
      <input id="set-check-for-updates" type="checkbox" checked={value} onChange={(e) => onChange(e.target.checked)} />
      {t("autoCheck")}
    </label>
  );
}
