// The keyboard help overlay (press ?), and the listener for the global shortcuts.
import { useContext, useEffect, useRef, useState } from "react";
import type { Language } from "../bindings";
import { LanguageContext } from "../i18n";
import { NAV_ORDER, isTextField, shortcutFor } from "./shortcuts";

const TEXT: Record<Language, { title: string; close: string; groups: [string, [string, string][]][] }> = {
  zh: {
    title: "键盘快捷键",
    close: "关闭",
    groups: [
      [
        "全局",
        [
          ["?", "打开 / 关闭本帮助"],
          ["Ctrl+K", "搜索股票（代码、名称、拼音首字母）"],
          [`Alt+1…${NAV_ORDER.length}`, "对话、个股、自选、持仓、记忆、概览、设置"],
          ["Esc", "关闭弹窗"],
        ],
      ],
      [
        "对话",
        [
          ["Enter", "发送"],
          ["Shift+Enter", "换行"],
          ["Esc", "停止当前回答"],
          ["Ctrl+N", "新对话"],
          ["Ctrl+L", "聚焦输入框"],
          ["/", "技能面板（↑ ↓ 选择，Enter 插入）"],
        ],
      ],
      [
        "图表",
        [
          ["拖动 / 滚轮", "平移 / 缩放全部历史"],
          ["悬停", "十字线显示开高低收量"],
        ],
      ],
    ],
  },
  en: {
    title: "Keyboard shortcuts",
    close: "Close",
    groups: [
      [
        "Everywhere",
        [
          ["?", "Open / close this help"],
          ["Ctrl+K", "Search stocks (code, name, pinyin initials)"],
          [`Alt+1…${NAV_ORDER.length}`, "Chat, Stock, Watchlist, Portfolio, Memory, Overview, Settings"],
          ["Esc", "Close dialogs"],
        ],
      ],
      [
        "Chat",
        [
          ["Enter", "Send"],
          ["Shift+Enter", "New line"],
          ["Esc", "Stop the answer"],
          ["Ctrl+N", "New chat"],
          ["Ctrl+L", "Focus the composer"],
          ["/", "Skills palette (↑ ↓ to choose, Enter to insert)"],
        ],
      ],
      [
        "Chart",
        [
          ["Drag / wheel", "Pan / zoom over the whole history"],
          ["Hover", "Crosshair with OHLCV"],
        ],
      ],
    ],
  },
};

export default function ShortcutsOverlay() {
  const lang = useContext(LanguageContext);
  const [open, setOpen] = useState(false);
  const closeButton = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const action = shortcutFor(
        { key: e.key, ctrlKey: e.ctrlKey, metaKey: e.metaKey, altKey: e.altKey, inTextField: isTextField(document.activeElement) },
        open,
      );
      if (!action) return;
      e.preventDefault();
      switch (action.type) {
        case "help":
          setOpen(true);
          break;
        case "close":
          setOpen(false);
          break;
        case "search":
          document.getElementById("stock-search")?.focus();
          break;
        case "nav":
          document.getElementById(action.target)?.click();
          break;
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [open]);

  useEffect(() => {
    if (open) closeButton.current?.focus();
  }, [open]);

  if (!open) return null;
  const text = TEXT[lang];
  return (
    <div className="modal-backdrop" onClick={() => setOpen(false)}>
      <div className="modal shortcuts" id="shortcuts-help" role="dialog" aria-modal="true" aria-labelledby="shortcuts-title" onClick={(e) => e.stopPropagation()}>
        <h2 id="shortcuts-title">{text.title}</h2>
        {text.groups.map(([group, rows]) => (
          <section key={group}>
            <h3>{group}</h3>
            <dl>
              {rows.map(([keys, what]) => (
                <div key={keys} className="shortcut">
                  <dt>
                    <kbd>{keys}</kbd>
                  </dt>
                  <dd>{what}</dd>
                </div>
              ))}
            </dl>
          </section>
        ))}
        <button ref={closeButton} onClick={() => setOpen(false)}>
          {text.close}
        </button>
      </div>
    </div>
  );
}
