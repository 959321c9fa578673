// Global keyboard shortcuts: what a key press means, as a pure function (table-tested), and
// the list the help overlay shows. Page-local keys (the composer's Enter, Ctrl+N …) are
// handled where they live; they are listed here so the overlay tells the whole story.

export type ShortcutAction = { type: "help" } | { type: "search" } | { type: "close" } | { type: "nav"; target: string };

/** The sidebar entries Alt+1…9 open, in sidebar order (ids of the nav buttons). */
export const NAV_ORDER = ["nav-chat", "nav-stock", "nav-watchlist", "nav-portfolio", "nav-memory", "nav-home", "nav-settings"];

export interface KeyPress {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
  /** The focus is in a text field: plain keys belong to it. */
  inTextField: boolean;
}

export function shortcutFor(e: KeyPress, helpOpen: boolean): ShortcutAction | null {
  const mod = e.ctrlKey || e.metaKey;
  if (helpOpen && e.key === "Escape") return { type: "close" };
  if (mod && !e.altKey && e.key.toLowerCase() === "k") return { type: "search" };
  if (e.altKey && !mod && /^[1-9]$/.test(e.key)) {
    const target = NAV_ORDER[Number(e.key) - 1];
    return target ? { type: "nav", target } : null;
  }
  if (e.key === "?" && !mod && !e.altKey && !e.inTextField) return { type: helpOpen ? "close" : "help" };
  return null;
}

export function isTextField(el: Element | null): boolean {
  if (!el) return false;
  if (el instanceof HTMLTextAreaElement) return true;
  if (el instanceof HTMLInputElement) return !["checkbox", "radio", "button", "submit"].includes(el.type);
  return el instanceof HTMLElement && el.isContentEditable;
}
