// Settings → MCP: the MCP servers whose tools the agent may use (as
// mcp__<server>__<tool>, behind the approval gate), with add, on/off, "always ask", remove,
// and a test that connects and lists the server's tools — read-only ones run without
// asking unless the server always asks; single tools can be trusted (run unasked), as with
// `wyckoff mcp trust`. The model is offered at most a capped number of each server's tools
// (`wyckoff mcp max-tools`); a test shows which are offered, under which name, and why any
// is left out, and the user picks which to offer (`wyckoff mcp pick`). A new server's environment variables (stdio) or header (http) come
// from named secrets: values typed here go to the keychain by name (`mcp_add`), never into
// mcp_servers.json, and are never read back — the list only says whether each is set.
import { useCallback, useContext, useEffect, useState } from "react";
import { commands, type CommandError, type McpEnvInput, type McpHeaderInput, type McpServerView, type McpTestView, type McpToolView } from "../bindings";
import { LanguageContext, localTexts } from "../i18n";

const zh = {
  title: "MCP 服务器",
  intro: "智能体可调用这些 MCP 服务器的工具（名为 mcp__服务器__工具）。服务器标为只读的工具直接运行，其余的每次都先请你批准；设为“总是询问”后只读工具也要批准；测试后可信任单个工具（不再询问）。密钥按名称存入钥匙串（此处或 wyckoff mcp secret），不写入配置文件。",
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
  offeredOf: "，提供给模型 {m} 个",
  leftOut: "未提供给模型：{list}",
  more: "等另 {n} 个",
  maxTools: "最多提供工具数",
  offer: "提供给模型",
  offerAll: "全部提供（不超过上限）",
  renamedAs: "名为 {name}",
  connectedNoList: "已连接",
  idle: "本次运行尚未使用",
  lastError: "上次出错：{message}",
  disabledNow: "已停用：{message}",
  trust: "信任（直接运行）",
  trusted: "已信任",
  envAdd: "添加环境变量",
  envVar: "变量名",
  secretName: "密钥名称",
  secretValue: "密钥值（存入钥匙串）",
  envRemove: "移除",
  header: "请求头（默认 Authorization）",
  secretLine: "{into} ← 密钥 {name}",
  secretSet: "已设置",
  secretMissing: "未设置",
};
type Key = keyof typeof zh;
const en: Record<Key, string> = {
  title: "MCP servers",
  intro: "The agent may call these MCP servers' tools (named mcp__server__tool). Tools the server marks read-only run at once; the others ask for your approval each time; with “always ask” the read-only ones ask too; after a test you can trust single tools (they stop asking). Secrets go to the keychain by name (here or with wyckoff mcp secret), never into the settings file.",
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
  offeredOf: ", {m} offered to the model",
  leftOut: "Left out of the model's requests: {list}",
  more: "and {n} more",
  maxTools: "Most tools offered",
  offer: "Offer to the model",
  offerAll: "Offer all (up to the cap)",
  renamedAs: "named {name}",
  connectedNoList: "connected",
  idle: "not used by this run yet",
  lastError: "last error: {message}",
  disabledNow: "disabled: {message}",
  trust: "Trust (run without asking)",
  trusted: "trusted",
  envAdd: "Add environment variable",
  envVar: "Variable",
  secretName: "Secret name",
  secretValue: "Secret value (to the keychain)",
  envRemove: "Remove",
  header: "Header (default Authorization)",
  secretLine: "{into} ← secret {name}",
  secretSet: "set",
  secretMissing: "not set",
};
type T = (k: Key, vars?: Record<string, string | number>) => string;

export const mcpText: (lang: string) => T = localTexts(zh, en);

export function errorText(e: CommandError | string, t: T): string {
  if (typeof e === "string") return t("failed", { message: e });
  return t(e.kind === "invalid_input" ? "invalid" : e.kind === "not_found" ? "notFound" : "failed", { message: e.message });
}

/** How a server stands in this app's sessions, in a line. */
export function statusText(s: McpServerView["status"], t: T): string {
  if (!s) return t("idle");
  if (s.disabled) return t("disabledNow", { message: s.disabled });
  if (s.last_error && !s.connected) return t("lastError", { message: s.last_error });
  if (s.connected) return s.tools == null ? t("connectedNoList") : t("connected", { n: s.tools }) + (s.offered < s.tools ? t("offeredOf", { m: s.offered }) : "");
  return t("idle");
}

/** The tools left out of the model's requests, with why: the first few, then how many more. */
export function leftOutText(s: McpServerView["status"], t: T): string | null {
  if (!s || s.left_out.length === 0) return null;
  const shown = s.left_out.slice(0, 5).map((l) => `${l.tool} (${l.why})`);
  if (s.left_out.length > 5) shown.push(t("more", { n: s.left_out.length - 5 }));
  return t("leftOut", { list: shown.join(", ") });
}

/** The pick after `tool` is (un)checked: the offered tools, in the server's order. */
export function nextPick(tools: McpToolView[], tool: string, offer: boolean): string[] {
  return tools.filter((x) => (x.name === tool ? offer : x.left_out == null)).map((x) => x.name);
}

/** "a b  c" → ["a", "b", "c"]. */
export function splitArgs(text: string): string[] {
  return text.split(/\s+/).filter((a) => a !== "");
}

export const isUrl = (target: string) => /^https?:\/\//.test(target.trim());

type EnvRow = { var: string; secret: string; value: string };
type Form = { name: string; target: string; args: string; env: EnvRow[]; header: string; headerSecret: string; headerValue: string };
const emptyForm: Form = { name: "", target: "", args: "", env: [], header: "", headerSecret: "", headerValue: "" };

/** The add form's secrets as the command takes them: blank rows dropped, an empty value
 *  means "already in the keychain or the environment". */
export function secretInputs(form: Form): { env: McpEnvInput[]; header: McpHeaderInput | null } {
  const value = (v: string) => (v.trim() === "" ? null : v);
  if (isUrl(form.target)) {
    const header = form.headerSecret.trim() === "" ? null : { header: form.header.trim(), secret: form.headerSecret.trim(), value: value(form.headerValue) };
    return { env: [], header };
  }
  const env = form.env.filter((r) => r.var.trim() !== "" || r.secret.trim() !== "").map((r) => ({ var: r.var.trim(), secret: r.secret.trim(), value: value(r.value) }));
  return { env, header: null };
}

export default function McpPanel() {
  const t = mcpText(useContext(LanguageContext));
  const [servers, setServers] = useState<McpServerView[] | null>(null);
  const [form, setForm] = useState<Form>(emptyForm);
  const url = isUrl(form.target);
  const setRow = (i: number, patch: Partial<EnvRow>) => setForm((f) => ({ ...f, env: f.env.map((r, j) => (j === i ? { ...r, ...patch } : r)) }));
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
    const { env, header } = secretInputs(form);
    const r = await commands.mcpAdd(name, form.target, url ? [] : splitArgs(form.args), env, header);
    if (await apply(r)) {
      setNote({ ok: true, text: t("added", { name }) });
      setForm(emptyForm);
    }
  };

  const pick = async (name: string, tools: string[] | null) => {
    if (await apply(await commands.mcpPickTools(name, tools))) await test(name);
  };

  const setMax = async (name: string, value: string) => {
    const n = Number.parseInt(value, 10);
    if (await apply(await commands.mcpSetMaxTools(name, Number.isNaN(n) ? null : n))) {
      if (tests[name]?.report) await test(name);
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
                  {t("maxTools")}
                  <input type="number" className="mcp-max-tools" min={1} max={128} size={4} key={s.max_tools} defaultValue={s.max_tools} onBlur={(e) => void setMax(s.name, e.target.value)} />
                </label>
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
                {leftOutText(s.status, t) && <p className="mcp-left-out muted">{leftOutText(s.status, t)}</p>}
                {s.secrets.length > 0 && (
                  <ul className="mcp-secrets">
                    {s.secrets.map((sec) => (
                      <li key={sec.name + sec.into} className={`mcp-secret${sec.set ? "" : " error"}`} data-secret={sec.name} data-set={sec.set}>
                        {t("secretLine", { into: sec.into, name: sec.name })} · {sec.set ? t("secretSet") : t("secretMissing")}
                      </li>
                    ))}
                  </ul>
                )}
                {st?.report && (
                  <div className="mcp-report ok" role="status">
                    {t("tools", { name: st.report.name, version: st.report.version, n: st.report.tools.length })}
                    {s.offered_tools !== null && (
                      <button type="button" className="mcp-offer-all" onClick={() => void pick(s.name, null)}>
                        {t("offerAll")}
                      </button>
                    )}
                    <ul className="mcp-tools">
                      {st.report.tools.map((tool) => {
                        const trusted = s.trusted_tools.includes(tool.name);
                        return (
                          <li key={tool.name} className="mcp-tool" data-tool={tool.name} data-read-only={tool.read_only} data-trusted={trusted} data-offered={tool.left_out == null} title={tool.description ?? ""}>
                            <code>{tool.name}</code> <span className="badge">{trusted ? t("trusted") : tool.read_only ? t("readOnly") : t("writes")}</span>
                            {tool.renamed && <span className="muted mcp-renamed"> {t("renamedAs", { name: tool.agent_name })}</span>}
                            <label className="inline">
                              <input type="checkbox" className="mcp-offer" checked={tool.left_out == null} onChange={(e) => void pick(s.name, nextPick(st.report?.tools ?? [], tool.name, e.target.checked))} />
                              {t("offer")}
                            </label>
                            {tool.left_out && <span className="muted mcp-why"> {tool.left_out}</span>}
                            <label className="inline">
                              <input type="checkbox" className="mcp-trust" checked={trusted} onChange={(e) => void commands.mcpSetTrusted(s.name, tool.name, e.target.checked).then(apply)} />
                              {t("trust")}
                            </label>
                          </li>
                        );
                      })}
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
          {!url && <input id="mcp-args" placeholder={t("args")} value={form.args} size={24} onChange={(e) => setForm((f) => ({ ...f, args: e.target.value }))} />}
          <button id="mcp-add" type="submit">
            {t("add")}
          </button>
        </div>
        {url ? (
          <div className="row mcp-header-row">
            <input id="mcp-header" placeholder={t("header")} value={form.header} size={16} onChange={(e) => setForm((f) => ({ ...f, header: e.target.value }))} />
            <input id="mcp-header-secret" placeholder={t("secretName")} value={form.headerSecret} size={14} onChange={(e) => setForm((f) => ({ ...f, headerSecret: e.target.value }))} />
            <input id="mcp-header-value" type="password" autoComplete="off" placeholder={t("secretValue")} value={form.headerValue} size={20} onChange={(e) => setForm((f) => ({ ...f, headerValue: e.target.value }))} />
          </div>
        ) : (
          <>
            {form.env.map((r, i) => (
              <div className="row mcp-env-row" key={i}>
                <input className="mcp-env-var" placeholder={t("envVar")} value={r.var} size={16} onChange={(e) => setRow(i, { var: e.target.value })} />
                <input className="mcp-env-secret" placeholder={t("secretName")} value={r.secret} size={14} onChange={(e) => setRow(i, { secret: e.target.value })} />
                <input className="mcp-env-value" type="password" autoComplete="off" placeholder={t("secretValue")} value={r.value} size={20} onChange={(e) => setRow(i, { value: e.target.value })} />
                <button type="button" className="mcp-env-remove" onClick={() => setForm((f) => ({ ...f, env: f.env.filter((_, j) => j !== i) }))}>
                  {t("envRemove")}
                </button>
              </div>
            ))}
            <button type="button" id="mcp-env-add" onClick={() => setForm((f) => ({ ...f, env: [...f.env, { var: "", secret: "", value: "" }] }))}>
              {t("envAdd")}
            </button>
          </>
        )}
        {note && (
          <p id="mcp-note" className={note.ok ? "ok" : "error"} role={note.ok ? "status" : "alert"}>
            {note.text}
          </p>
        )}
      </form>
    </section>
  );
}
