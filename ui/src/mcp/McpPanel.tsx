// Settings → MCP (issue 26): the MCP servers whose tools the agent may use (as
// mcp__<server>__<tool>, behind the approval gate), with add, on/off, "always ask", remove,
// and a test that connects and lists the server's tools — read-only ones run without
// asking unless the server always asks.
import { useCallback, useContext, useEffect, useState } from "react";
import { commands, type McpCommandError, type McpServerView, type McpTestView } from "../bindings";
import { LanguageContext, localTexts } from "../i18n";

const zh = {
  title: "MCP 服务器",
  intro: "智能体可调用这些 MCP 服务器的工具（名为 mcp__服务器__工具）。服务器标为只读的工具直接运行，其余的每次都先请你批准；设为“总是询问”后只读工具也要批准。密钥用 wyckoff mcp secret 存入钥匙串。",
  none: "还没有 MCP 服务器。",
  name: "名称",
  target: "命令或 URL",
  args: "参数（空格分隔）",
  add: "添加服务器",
  added: "已添加「{name}」",
  enabled: "启用",
  alwaysAsk: "总是询问",
  test: "测试连接",
  testing: "连接中…",
  remove: "删除",
  tools: "{name} {version}：{n} 个工具",
  readOnly: "只读",
  writes: "需批准",
  invalid: "未保存：{message}",
  notFound: "找不到：{message}",
  failed: "连接失败：{message}",
  connected: "已连接 · {n} 个工具",
  connectedNoList: "已连接",
  idle: "本次运行尚未使用",
  lastError: "上次出错：{message}",
  disabledNow: "已停用：{message}",
};
type Key = keyof typeof zh;
const en: Record<Key, string> = {
  title: "MCP servers",
  intro: "The agent may call these MCP servers' tools (named mcp__server__tool). Tools the server marks read-only run at once; the others ask for your approval each time; with “always ask” the read-only ones ask too. Secrets go to the keychain with wyckoff mcp secret.",
  none: "No MCP server yet.",
  name: "Name",
  target: "Command or URL",
  args: "Arguments (space-separated)",
  add: "Add server",
  added: "Added “{name}”",
  enabled: "On",
  alwaysAsk: "Always ask",
  test: "Test connection",
  testing: "Connecting…",
  remove: "Remove",
  tools: "{name} {version}: {n} tools",
  readOnly: "read-only",
  writes: "asks",
  invalid: "Not saved: {message}",
  notFound: "Not found: {message}",
  failed: "Connection failed: {message}",
  connected: "connected · {n} tools",
  connectedNoList: "connected",
  idle: "not used by this run yet",
  lastError: "last error: {message}",
  disabledNow: "disabled: {message}",
};
type T = (k: Key, vars?: Record<string, string | number>) => string;

export const mcpText: (lang: string) => T = localTexts(zh, en);

export function errorText(e: McpCommandError | string, t: T): string {
  if (typeof e === "string") return t("failed", { message: e });
  return t(e.type === "invalid" ? "invalid" : e.type === "not_found" ? "notFound" : "failed", { message: e.message });
}

/** How a server stands in this app's sessions, in a line. */
export function statusText(s: McpServerView["status"], t: T): string {
  if (!s) return t("idle");
  if (s.disabled) return t("disabledNow", { message: s.disabled });
  if (s.last_error && !s.connected) return t("lastError", { message: s.last_error });
  if (s.connected) return s.tools == null ? t("connectedNoList") : t("connected", { n: s.tools });
  return t("idle");
}

/** "a b  c" → ["a", "b", "c"]. */
export function splitArgs(text: string): string[] {
  return text.split(/\s+/).filter((a) => a !== "");
}

export default function McpPanel() {
  const t = mcpText(useContext(LanguageContext));
  const [servers, setServers] = useState<McpServerView[] | null>(null);
  const [form, setForm] = useState({ name: "", target: "", args: "" });
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);
  const [tests, setTests] = useState<Record<string, { busy: boolean; report?: McpTestView; error?: string }>>({});

  const load = useCallback(async () => {
    const r = await commands.mcpServers();
    if (r.status === "ok") setServers(r.data);
    else setNote({ ok: false, text: errorText(r.error, t) });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  const apply = async (r: Awaited<ReturnType<typeof commands.mcpServers>>) => {
    if (r.status === "ok") setServers(r.data);
    else setNote({ ok: false, text: errorText(r.error, t) });
    return r.status === "ok";
  };

  const add = async () => {
    setNote(null);
    const name = form.name.trim();
    if (await apply(await commands.mcpAdd(name, form.target, splitArgs(form.args)))) {
      setNote({ ok: true, text: t("added", { name }) });
      setForm({ name: "", target: "", args: "" });
    }
  };

  const test = async (name: string) => {
    setTests((m) => ({ ...m, [name]: { busy: true } }));
    const r = await commands.mcpTest(name);
    setTests((m) => ({ ...m, [name]: r.status === "ok" ? { busy: false, report: r.data } : { busy: false, error: errorText(r.error, t) } }));
  };

  return (
    <section className="card" id="mcp-panel">
      <h2>{t("title")}</h2>
      <p className="muted">{t("intro")}</p>
      {servers !== null && servers.length === 0 && <p className="hint">{t("none")}</p>}
      {servers !== null && servers.length > 0 && (
        <ul className="push-list">
          {servers.map((s) => {
            const st = tests[s.name];
            return (
              <li key={s.name} className="mcp-server" data-name={s.name} data-enabled={s.enabled} data-always-ask={s.always_ask}>
                <strong>{s.name}</strong> <span className="muted">{s.kind}</span> <code className="mcp-target">{s.target}</code>
                <span className={`mcp-status${s.status?.disabled || (s.status?.last_error && !s.status.connected) ? " error" : ""}`} data-connected={s.status?.connected ?? false}>
                  {statusText(s.status, t)}
                </span>
                <label className="inline">
                  <input type="checkbox" className="mcp-enabled" checked={s.enabled} onChange={(e) => void commands.mcpSetEnabled(s.name, e.target.checked).then(apply)} />
                  {t("enabled")}
                </label>
                <label className="inline">
                  <input type="checkbox" className="mcp-always-ask" checked={s.always_ask} onChange={(e) => void commands.mcpSetAlwaysAsk(s.name, e.target.checked).then(apply)} />
                  {t("alwaysAsk")}
                </label>
                <button type="button" className="mcp-test" disabled={st?.busy} onClick={() => void test(s.name)}>
                  {st?.busy ? t("testing") : t("test")}
                </button>
                <button type="button" className="mcp-remove" onClick={() => void commands.mcpRemove(s.name).then(apply)}>
                  {t("remove")}
                </button>
                {st?.report && (
                  <div className="mcp-report ok" role="status">
                    {t("tools", { name: st.report.name, version: st.report.version, n: st.report.tools.length })}
                    <ul className="mcp-tools">
                      {st.report.tools.map((tool) => (
                        <li key={tool.name} className="mcp-tool" data-tool={tool.name} data-read-only={tool.read_only} title={tool.description ?? ""}>
                          <code>{tool.name}</code> <span className="badge">{tool.read_only ? t("readOnly") : t("writes")}</span>
                        </li>
                      ))}
                    </ul>
                  </div>
                )}
                {st?.error && (
                  <p className="mcp-report error" role="alert">
                    {st.error}
                  </p>
                )}
              </li>
            );
          })}
        </ul>
      )}
      <form
        id="mcp-form"
        className="alert-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void add();
        }}
      >
        <div className="row">
          <input id="mcp-name" placeholder={t("name")} value={form.name} size={10} onChange={(e) => setForm((f) => ({ ...f, name: e.target.value }))} />
          <input id="mcp-target" placeholder={t("target")} value={form.target} size={30} onChange={(e) => setForm((f) => ({ ...f, target: e.target.value }))} />
          <input id="mcp-args" placeholder={t("args")} value={form.args} size={24} onChange={(e) => setForm((f) => ({ ...f, args: e.target.value }))} />
          <button id="mcp-add" type="submit">
            {t("add")}
          </button>
        </div>
        {note && (
          <p id="mcp-note" className={note.ok ? "ok" : "error"} role={note.ok ? "status" : "alert"}>
            {note.text}
          </p>
        )}
      </form>
    </section>
  );
}
