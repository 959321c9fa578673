// The stock page's sync button: brings this one stock up to date from the live sources,
// shows each step, then has the page reload its chart. Offline says so plainly.
import { useState } from "react";
import { Channel } from "@tauri-apps/api/core";
import { commands, type SyncProgress } from "../bindings";
import { workspaceErrorText } from "./workspaceModel";
import { useWorkspaceText } from "./workspaceText";

export default function StockSync({ code, onSynced }: { code: string; onSynced: () => void }) {
  const t = useWorkspaceText();
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);

  const sync = async () => {
    setBusy(true);
    setNote(null);
    const channel = new Channel<SyncProgress>();
    channel.onmessage = (p) => setNote({ ok: true, text: t("syncProgress", { code: p.code, i: p.index + (p.done ? 1 : 0), n: p.total }) });
    try {
      const r = await commands.syncStock(code, channel);
      if (r.status === "ok") {
        const d = r.data.last_date ?? "—";
        setNote({
          ok: true,
          text: r.data.status === "updated" ? t("syncDone", { code: r.data.code, n: r.data.new_bars, d }) : t("syncUpToDate", { d }),
        });
        onSynced();
      } else setNote({ ok: false, text: workspaceErrorText(r.error, t) });
    } catch (e) {
      setNote({ ok: false, text: e instanceof Error ? e.message : String(e) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <button id="stock-sync" disabled={busy} aria-busy={busy} onClick={() => void sync()}>
        {t("navSync")}
      </button>
      {note && (
        <span id="stock-sync-note" className={note.ok ? "hint" : "error"} role={note.ok ? "status" : "alert"} data-ok={note.ok}>
          {note.text}
        </span>
      )}
    </>
  );
}
