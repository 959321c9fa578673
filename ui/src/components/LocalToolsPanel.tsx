import { useState } from "react";
import type { Settings } from "../bindings";
import { useT } from "../i18n";

/** One folder per line; blank lines dropped. Paths are checked by the backend on save. */
export function parseFolders(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

/** Settings → local tools: the folders read_file / write_file may use besides the
 * workspace, and whether web_fetch may reach private addresses. */
export default function LocalToolsPanel({ settings, onChange }: { settings: Settings; onChange: (s: Settings) => void }) {
  const t = useT();
  // The text is kept as typed (a line being written is not dropped mid-edit).
  const [folders, setFolders] = useState(() => settings.file_roots.join("\n"));
  return (
    <section className="card" id="local-tools">
      <h2>{t("localTools")}</h2>
      <label className="field" htmlFor="set-file-roots">
        <span>{t("fileRoots")}</span>
        <textarea
          id="set-file-roots"
          rows={Math.max(2, folders.split("\n").length)}
          spellCheck={false}
          placeholder="/home/me/research"
          value={folders}
          onChange={(e) => {
            setFolders(e.target.value);
            onChange({ ...settings, file_roots: parseFolders(e.target.value) });
          }}
        />
      </label>
      <p className="muted">{t("fileRootsHint")}</p>
      <label className="inline">
        <input
          id="set-allow-private-fetch"
          type="checkbox"
          checked={settings.allow_private_web_fetch}
          onChange={(e) => onChange({ ...settings, allow_private_web_fetch: e.target.checked })}
        />
        {t("allowPrivateFetch")}
      </label>
      <p className="muted">{t("allowPrivateFetchHint")}</p>
    </section>
  );
}
