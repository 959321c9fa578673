import { useCallback, useEffect, useState } from "react";
import { commands, events, type AlertTarget, type AppInfo, type SettingsView, type Theme } from "./bindings";
import { LanguageContext, translate } from "./i18n";
import ChatPage from "./chat/ChatPage";
import Home from "./pages/Home";
import FirstRunGate from "./firstrun/FirstRun";
import MemoryPage from "./pages/Memory";
import SettingsPage from "./pages/Settings";
import StockPage from "./pages/Stock";
import WatchlistPage from "./pages/Watchlist";
import PortfolioPage from "./pages/Portfolio";
import { workspaceText } from "./pages/workspaceText";
import SearchBox from "./components/SearchBox";
import { marketText } from "./pages/marketText";
import TaskPanel from "./tasks/TaskPanel";
import { OpenStockContext } from "./chat/stockLinks";
import ShortcutsOverlay from "./components/ShortcutsOverlay";
import { ChartWarmUp } from "./components/StockChart";
import InboxPage, { InboxNavButton } from "./inbox/InboxPage";
import AlertsPage, { AlertsNavButton } from "./alerts/AlertsPage";
import ResearchPage from "./research/ResearchPage";
import { researchText } from "./research/text";
import ReviewPage from "./review/ReviewPage";
import { OpenStockAtContext } from "./review/openAt";
import { reviewText } from "./review/reviewModel";
import MarketMapPage from "./market/MarketMapPage";
import { mapText } from "./market/text";
import UpdateIndicator from "./updater/UpdateIndicator";

type Page = "chat" | "memory" | "home" | "settings" | "stock" | "watchlist" | "portfolio" | "inbox" | "alerts" | "research" | "review" | "map";

function applyTheme(theme: Theme) {
  const root = document.documentElement;
  if (theme === "system") root.removeAttribute("data-theme");
  else root.setAttribute("data-theme", theme);
}

export default function App() {
  const [page, setPage] = useState<Page | null>(null);
  const [view, setView] = useState<SettingsView | null>(null);
  const [info, setInfo] = useState<AppInfo | null>(null);
  // Once opened, the chat stays mounted while other pages are shown, so the conversation
  // (and a running turn) is still there on return.
  const [chatOpened, setChatOpened] = useState(false);
  const [stockCode, setStockCode] = useState<string | null>(null);
  // An alert opens its stock at the bar it fired on (replayed to that close).
  const [stockAt, setStockAt] = useState<{ code: string; at: number } | null>(null);
  // What the alert centre's form starts with: a stock, or the whole watchlist.
  const [alertPreset, setAlertPreset] = useState<AlertTarget | null>(null);
  // A sweep / walk-forward the task panel asked to open on the research page.
  const [researchTask, setResearchTask] = useState<string | null>(null);
  const [chatPrefill, setChatPrefill] = useState<{ text: string } | undefined>(undefined);
  const [chatShow, setChatShow] = useState<{ id: string } | undefined>(undefined);
  // A task's notification or the tray leads to the conversation that started the task;
  // a task the user started from the overview (no conversation) leads back there.
  useEffect(() => {
    const unlisten = events.openConversation.listen((e) => {
      const id = e.payload.conversation_id;
      if (id) {
        setChatShow({ id });
        setPage("chat");
      } else {
        setPage("home");
      }
    });
    return () => {
      void unlisten.then((f) => f());
    };
  }, []);
  const openStock = useCallback((code: string) => {
    setStockCode(code);
    setStockAt(null);
    setPage("stock");
  }, []);
  const openStockAt = useCallback((code: string, at: number | null) => {
    setStockCode(code);
    setStockAt(at == null ? null : { code, at });
    setPage("stock");
  }, []);

  const reload = useCallback(async () => {
    const [v, i] = await Promise.all([commands.getSettings(), commands.appInfo()]);
    setView(v);
    setInfo(i);
  }, []);

  useEffect(() => {
    void reload();
    const unlisten = events.settingsChanged.listen((e) => {
      setView((prev) => (prev ? { ...prev, settings: e.payload.settings } : prev));
    });
    return () => {
      void unlisten.then((f) => f());
    };
  }, [reload]);

  const lang = view?.settings.language ?? "zh";
  const hasModel = !!view && view.settings.models.some((m) => m.id === view.settings.main_model);
  // First launch without a model opens the overview, which leads to Settings; with a
  // model the chat opens.
  useEffect(() => {
    if (view && page === null) setPage(hasModel ? "chat" : "home");
  }, [view, page, hasModel]);
  useEffect(() => {
    if (page === "chat") setChatOpened(true);
  }, [page]);
  useEffect(() => {
    if (view) applyTheme(view.settings.theme);
    document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  }, [view, lang]);

  if (!view || !info || page === null) {
    return <div className="loading" aria-busy="true" />;
  }
  const t = (k: Parameters<typeof translate>[1]) => translate(lang, k);

  return (
    <LanguageContext.Provider value={lang}>
      <OpenStockContext.Provider value={openStock}>
        <OpenStockAtContext.Provider value={openStockAt}>
        <div className="shell">
          <nav className="sidebar" aria-label="main">
            <div className="brand">{t("appName")}</div>
            <SearchBox onOpen={openStock} />
            <button id="nav-chat" className={page === "chat" ? "active" : ""} onClick={() => setPage("chat")}>
              {t("navChat")}
            </button>
            <button id="nav-stock" className={page === "stock" ? "active" : ""} onClick={() => setPage("stock")}>
              {marketText(lang, "navStock")}
            </button>
            <button id="nav-watchlist" className={page === "watchlist" ? "active" : ""} onClick={() => setPage("watchlist")}>
              {marketText(lang, "navWatchlist")}
            </button>
            <button id="nav-portfolio" className={page === "portfolio" ? "active" : ""} onClick={() => setPage("portfolio")}>
              {workspaceText(lang, "navPortfolio")}
            </button>
            <button id="nav-map" className={page === "map" ? "active" : ""} onClick={() => setPage("map")}>
              {mapText(lang)("nav")}
            </button>
            <button id="nav-research" className={page === "research" ? "active" : ""} onClick={() => setPage("research")}>
              {researchText(lang)("nav")}
            </button>
            <button id="nav-review" className={page === "review" ? "active" : ""} onClick={() => setPage("review")}>
              {reviewText(lang)("nav")}
            </button>
            <button id="nav-memory" className={page === "memory" ? "active" : ""} onClick={() => setPage("memory")}>
              {t("navMemory")}
            </button>
            <InboxNavButton active={page === "inbox"} onClick={() => setPage("inbox")} />
            <AlertsNavButton active={page === "alerts"} onClick={() => setPage("alerts")} />
            <button id="nav-home" className={page === "home" ? "active" : ""} onClick={() => setPage("home")}>
              {t("navHome")}
            </button>
            <button id="nav-settings" className={page === "settings" ? "active" : ""} onClick={() => setPage("settings")}>
              {t("navSettings")}
            </button>
            <UpdateIndicator />
          </nav>
          <main className="content">
            {(page === "chat" || chatOpened) && (
              <ChatPage active={page === "chat"} hasModel={hasModel} settings={view.settings} onOpenSettings={() => setPage("settings")} prefill={chatPrefill} show={chatShow} />
            )}
            {page === "stock" && (
              <StockPage
                code={stockCode}
                replayAt={stockAt?.code === stockCode ? stockAt.at : null}
                onAlert={(code) => {
                  setAlertPreset({ type: "stock", code });
                  setPage("alerts");
                }}
                onAsk={(text) => {
                  setChatPrefill({ text });
                  setPage("chat");
                }}
              />
            )}
            {page === "watchlist" && (
              <WatchlistPage
                onOpen={openStock}
                onAlert={() => {
                  setAlertPreset({ type: "watchlist" });
                  setPage("alerts");
                }}
              />
            )}
            {page === "memory" && <MemoryPage />}
            {page === "inbox" && <InboxPage />}
            {page === "alerts" && <AlertsPage preset={alertPreset} onOpenStock={openStockAt} />}
            {page === "research" && <ResearchPage openTask={researchTask} />}
            {page === "review" && <ReviewPage onOpenStock={openStockAt} />}
            {page === "map" && <MarketMapPage onOpenStock={openStock} />}
            {page === "portfolio" && <PortfolioPage onOpen={openStock} />}
            {page === "home" && (
              <FirstRunGate onOpenSettings={() => setPage("settings")}>
              <Home
                view={view}
                info={info}
                onOpenSettings={() => setPage("settings")}
                onOpenStock={openStock}
                onAsk={(text) => {
                  setChatPrefill({ text });
                  setPage("chat");
                }}
              />
              </FirstRunGate>
            )}
            {page === "settings" && (
              <SettingsPage
                view={view}
                onSaved={(settings) => setView({ ...view, settings })}
                onAsk={(text) => {
                  setChatPrefill({ text });
                  setPage("chat");
                }}
              />
            )}
          </main>
          <ShortcutsOverlay />
          <ChartWarmUp />
          <TaskPanel
            onAsk={(text) => {
              setChatPrefill({ text });
              setPage("chat");
            }}
            onOpenStock={openStock}
            onOpenResearch={(taskId) => {
              setResearchTask(taskId);
              setPage("research");
            }}
          />
        </div>
        </OpenStockAtContext.Provider>
      </OpenStockContext.Provider>
    </LanguageContext.Provider>
  );
}
