// The alert centre, the parts without React: rules, conditions and fired alerts in words
// (zh / en), the add form as the backend takes it, and the badge's count. Figures are the
// backend's exact numbers, only formatted here.
import { useContext } from "react";
import type { AlertCondition, AlertFigures, AlertTarget, DeliveryStatus, FiredAlert } from "../bindings";
import { LanguageContext, localTexts } from "../i18n";

const zh = {
  title: "提醒",
  intro: "按规则检查自选股、持仓或单只股票的最新收盘；持仓设了止损价的，无需规则也会检查。触发的提醒记录在此，并推送到已设置的渠道。",
  checkNow: "立即检查",
  checking: "检查中…",
  checked: "数据日期 {date}：触发 {fired} 条，冷却中 {held} 条，缺数据 {missing} 条",
  checkFailed: "检查失败：{message}",
  fired: "已触发",
  noneFired: "还没有触发过提醒。",
  rules: "规则",
  noRules: "还没有规则。",
  add: "添加规则",
  added: "已添加规则 #{id}",
  target: "对象",
  targetStock: "单只股票",
  targetWatchlist: "全部自选股",
  targetPortfolio: "全部持仓",
  code: "代码",
  condition: "条件",
  value: "数值",
  event: "事件",
  anyEvent: "任意事件",
  cooldown: "冷却（交易日）",
  enabled: "启用",
  remove: "删除",
  open: "打开该K线",
  invalid: "未添加：{message}",
  notFound: "找不到：{message}",
  other: "出错：{message}",
  needValue: "请填写一个数值",
  needCode: "请填写股票代码",
  needCooldown: "冷却天数须为整数",
  onWatchlist: "自选股",
  onPortfolio: "持仓",
  stopLoss: "持仓止损",
  targetReached: "持仓目标价",
  c_price_above: "收盘价 ≥ {v}",
  c_price_below: "收盘价 ≤ {v}",
  c_change_above: "日涨跌幅 ≥ {v}%",
  c_change_below: "日涨跌幅 ≤ {v}%",
  c_volume_ratio: "成交量 ≥ 20 日均量的 {v} 倍",
  c_event: "威科夫事件 {v}",
  c_event_any: "出现任意威科夫事件",
  c_phase_change: "阶段变化",
  c_health_change: "健康度变化",
  c_stop_loss: "收盘价跌破持仓止损价",
  c_target_reached: "收盘价达到持仓目标价",
  f_price: "收盘 {close}，阈值 {level}",
  f_change: "涨跌幅 {pct}%（收盘 {close}，前收 {prev}）",
  f_volume: "成交量 {volume}，为 20 日均量 {avg} 的 {ratio} 倍",
  f_event: "{event}（{bar}）确认于 {known}，价位 {price}",
  f_phase: "{from} → {to}（前一日 {prev}）",
  f_health: "{from} → {to}（前一日 {prev}）",
  f_stop: "收盘 {close}，止损 {stop}",
  f_target: "收盘 {close}，目标 {target}",
  fl_price: "现价 {close}，阈值 {level}",
  fl_change: "涨跌幅 {pct}%（现价 {close}，前收 {prev}）",
  fl_volume: "按时段折算全天成交量 {volume}，为 20 日均量 {avg} 的 {ratio} 倍",
  fl_stop: "现价 {close}，止损 {stop}",
  fl_target: "现价 {close}，目标 {target}",
  none: "无",
  d_recorded: "仅记录",
  d_pending: "待推送",
  d_delivered: "已推送",
  d_failed: "推送失败",
  pushTitle: "推送渠道",
  pushIntro: "触发的提醒推送到这些渠道（企业微信、钉钉、飞书机器人，Telegram，电子邮件，或任意 Webhook）。令牌、加签密钥与邮箱密码存入系统钥匙串，不写入任何文件。",
  pushNone: "还没有推送渠道。",
  pushName: "名称",
  pushKind: "类型",
  pushUrl: "地址",
  pushUrlOfficial: "留空用官方地址",
  pushChatId: "Chat ID",
  pushToken: "令牌 / key",
  pushSign: "加签密钥",
  pushPrivate: "允许内网或本机地址",
  pushWebhookSecret: "密钥（可选，存入钥匙串）",
  pushSecretIn: "密钥放在",
  pushSecretHeader: "请求头",
  pushSecretQuery: "查询参数",
  pushSecretName: "请求头或参数名",
  pushAdd: "添加渠道",
  pushAdded: "已添加渠道「{name}」",
  pushTest: "发送测试",
  pushTesting: "发送中…",
  pushTestOk: "测试成功（HTTP {status}）",
  pushTestFailed: "测试失败（{status}）：{answer}",
  pushRemove: "删除",
  pushTokenSet: "令牌已存入钥匙串",
  pushUrlSmtp: "smtps://主机:465 或 smtp://主机:587（STARTTLS）",
  pushFrom: "发件人",
  pushTo: "收件人（多个用逗号分隔）",
  pushUser: "登录名（留空用发件人地址）",
  pushPassword: "邮箱密码",
  pushPasswordSet: "密码已存入钥匙串",
  pushRecipients: "收件人：{to}",
  pushTestOkAnswer: "测试成功：{answer}",
  pushCa: "自有 CA 证书（PEM 完整路径，可选）",
  pushCaTrusted: "信任 CA：{path}",
  pushEvents: "推送内容",
  ev_alerts: "提醒",
  ev_tasks: "后台任务完成",
  ev_schedules: "定时任务完成",
  ev_approvals: "待审批",
  pushLast: "最近一次推送：{status}",
  pushLastError: "最近一次推送：{status}（{error}）",
  s_pending: "待发送",
  s_sent: "已送达",
  s_failed: "失败",
  keychain: "钥匙串没有保存密钥，渠道未添加：{message}",
  intraday: "盘中 {time}",
  intradayTitle: "盘中按实时行情触发（{at} 北京时间，未收盘的部分K线）",
  intervalTitle: "盘中提醒",
  intervalLabel: "盘中检查间隔（分钟，1–60）",
  intervalHint: "交易时段内（9:30–11:30、13:00–15:00）每隔这么多分钟按实时行情检查一次规则；应用和 wyckoff daemon 都按此设置。",
  intervalRange: "盘中检查间隔须为 1–60 的整数分钟",
};
type Key = keyof typeof zh;
const en: Record<Key, string> = {
  title: "Alerts",
  intro: "Rules checked on the latest close of the watchlist, the holdings or one stock; a holding with a stop-loss is checked without a rule. What fires is kept here and pushed to the channels set up.",
  checkNow: "Check now",
  checking: "Checking…",
  checked: "Data of {date}: {fired} fired, {held} held back by cooldowns, {missing} lacking data",
  checkFailed: "The check failed: {message}",
  fired: "Fired",
  noneFired: "No alert has fired yet.",
  rules: "Rules",
  noRules: "No rules yet.",
  add: "Add rule",
  added: "Added rule #{id}",
  target: "On",
  targetStock: "One stock",
  targetWatchlist: "Every watchlist stock",
  targetPortfolio: "Every holding",
  code: "Code",
  condition: "Condition",
  value: "Value",
  event: "Event",
  anyEvent: "any event",
  cooldown: "Cooldown (trading days)",
  enabled: "On",
  remove: "Remove",
  open: "Open that bar",
  invalid: "Not added: {message}",
  notFound: "Not found: {message}",
  other: "Error: {message}",
  needValue: "Give a number",
  needCode: "Give a stock code",
  needCooldown: "The cooldown is a whole number of days",
  onWatchlist: "Watchlist",
  onPortfolio: "Holdings",
  stopLoss: "Holding's stop-loss",
  targetReached: "Holding's target",
  c_price_above: "close ≥ {v}",
  c_price_below: "close ≤ {v}",
  c_change_above: "day change ≥ {v}%",
  c_change_below: "day change ≤ {v}%",
  c_volume_ratio: "volume ≥ {v}× the 20-day average",
  c_event: "Wyckoff event {v}",
  c_event_any: "any Wyckoff event",
  c_phase_change: "phase change",
  c_health_change: "health change",
  c_stop_loss: "close at or below the holding's stop-loss",
  c_target_reached: "close at or above the holding's target",
  f_price: "close {close}, level {level}",
  f_change: "day change {pct}% (close {close}, previous {prev})",
  f_volume: "volume {volume} = {ratio}× the 20-day average {avg}",
  f_event: "{event} ({bar}) known on {known} at {price}",
  f_phase: "{from} → {to} (previous close {prev})",
  f_health: "{from} → {to} (previous close {prev})",
  f_stop: "close {close}, stop {stop}",
  f_target: "close {close}, target {target}",
  fl_price: "last {close}, level {level}",
  fl_change: "day change {pct}% (last {close}, previous {prev})",
  fl_volume: "volume at today's pace {volume} = {ratio}× the 20-day average {avg}",
  fl_stop: "last {close}, stop {stop}",
  fl_target: "last {close}, target {target}",
  none: "none",
  d_recorded: "recorded only",
  d_pending: "waiting to push",
  d_delivered: "pushed",
  d_failed: "push failed",
  pushTitle: "Push channels",
  pushIntro: "Fired alerts are pushed to these channels (WeCom, DingTalk and Feishu robots, Telegram, e-mail, or any webhook). Tokens, signing secrets and mail passwords go to the system keychain, never to a file.",
  pushNone: "No push channel yet.",
  pushName: "Name",
  pushKind: "Kind",
  pushUrl: "URL",
  pushUrlOfficial: "empty: the official address",
  pushChatId: "Chat ID",
  pushToken: "Token / key",
  pushSign: "Signing secret",
  pushPrivate: "Allow a private or local address",
  pushWebhookSecret: "Secret (optional, kept in the keychain)",
  pushSecretIn: "Secret goes in",
  pushSecretHeader: "a header",
  pushSecretQuery: "a query parameter",
  pushSecretName: "Header or parameter name",
  pushAdd: "Add channel",
  pushAdded: "Added channel “{name}”",
  pushTest: "Send test",
  pushTesting: "Sending…",
  pushTestOk: "Test delivered (HTTP {status})",
  pushTestFailed: "Test failed ({status}): {answer}",
  pushRemove: "Remove",
  pushTokenSet: "token in the keychain",
  pushUrlSmtp: "smtps://host:465 or smtp://host:587 (STARTTLS)",
  pushFrom: "From",
  pushTo: "To (comma-separated)",
  pushUser: "Login (empty: the sender's address)",
  pushPassword: "Mail password",
  pushPasswordSet: "password in the keychain",
  pushRecipients: "To: {to}",
  pushTestOkAnswer: "Test delivered: {answer}",
  pushCa: "Own CA certificate (PEM, full path; optional)",
  pushCaTrusted: "trusts CA {path}",
  pushEvents: "Sends",
  ev_alerts: "alerts",
  ev_tasks: "finished tasks",
  ev_schedules: "finished schedules",
  ev_approvals: "approvals waiting",
  pushLast: "Last push: {status}",
  pushLastError: "Last push: {status} ({error})",
  s_pending: "pending",
  s_sent: "sent",
  s_failed: "failed",
  keychain: "The keychain did not keep the secret; the channel was not added: {message}",
  intraday: "intraday {time}",
  intradayTitle: "Fired during the session on the live quote at {at} Beijing time (a partial bar)",
  intervalTitle: "Intraday alerts",
  intervalLabel: "Check every (minutes, 1–60)",
  intervalHint: "During the session (9:30–11:30, 13:00–15:00) the rules are checked on live quotes this often; the app and wyckoff daemon both follow it.",
  intervalRange: "The intraday check interval must be a whole number of minutes from 1 to 60",
};

export type T = (k: Key, vars?: Record<string, string | number>) => string;

export const alertsText: (lang: string) => T = localTexts(zh, en);

export function useAlertsText(): T {
  return alertsText(useContext(LanguageContext));
}

/** The events a rule may name (the engine's list). */
export const EVENTS = ["SC", "AR", "ST", "Spring", "SOS", "LPS", "BC", "UTAD", "SOW", "LPSY"] as const;

const num = (v: number | null, digits = 2) => (v == null ? "—" : Number.isInteger(v) ? String(v) : v.toFixed(digits));

export function conditionText(c: AlertCondition, t: T): string {
  switch (c.type) {
    case "price_above":
    case "price_below":
      return t(`c_${c.type}`, { v: num(c.level) });
    case "change_above":
    case "change_below":
      return t(`c_${c.type}`, { v: num(c.pct) });
    case "volume_ratio":
      return t("c_volume_ratio", { v: num(c.k) });
    case "event":
      return c.event ? t("c_event", { v: c.event }) : t("c_event_any");
    case "phase_change":
    case "health_change":
    case "stop_loss":
    case "target_reached":
      return t(`c_${c.type}`);
  }
}

/** A condition kind in the form's list, its value left as "…". */
export function kindLabel(kind: RuleKind, t: T): string {
  return kind === "event" ? t("c_event_any") : t(`c_${kind}`, { v: "…" });
}

export function targetText(target: AlertTarget, t: T): string {
  switch (target.type) {
    case "stock":
      return target.code;
    case "watchlist":
      return t("onWatchlist");
    case "portfolio":
      return t("onPortfolio");
  }
}

function phaseText(p: { schematic: string; phase: string } | null, t: T): string {
  return p ? `${p.schematic} ${p.phase}` : t("none");
}

/** The exact figures that fired it. */
/** The figures that fired an alert. `live` (fired intraday): the price is the quote's last,
 * not a close, and the volume the day's pace so far scaled to a whole session. */
export function figuresText(f: AlertFigures, t: T, live = false): string {
  switch (f.type) {
    case "price_above":
    case "price_below":
      return t(live ? "fl_price" : "f_price", { close: num(f.close), level: num(f.level) });
    case "change_above":
    case "change_below":
      return t(live ? "fl_change" : "f_change", { pct: num(f.change_pct), close: num(f.close), prev: num(f.prev_close) });
    case "volume_ratio":
      return t(live ? "fl_volume" : "f_volume", { volume: num(f.volume, 0), avg: num(f.avg_volume_20, 0), ratio: num(f.ratio) });
    case "event":
      return f.events.map((e) => t("f_event", { event: e.event, bar: e.bar_date, known: e.known_on, price: num(e.price) })).join("; ");
    case "phase_change":
      return t("f_phase", { from: phaseText(f.from, t), to: phaseText(f.to, t), prev: f.prev_date });
    case "health_change":
      return t("f_health", { from: f.from, to: f.to, prev: f.prev_date });
    case "stop_loss":
      return t(live ? "fl_stop" : "f_stop", { close: num(f.close), stop: num(f.stop_loss) });
    case "target_reached":
      return t(live ? "fl_target" : "f_target", { close: num(f.close), target: num(f.target) });
  }
}

export function deliveryText(d: DeliveryStatus, t: T): string {
  return t(`d_${d}`);
}

/** When an alert fired during the session: the quote's time ("10:42", or the whole
 * "YYYY-MM-DD HH:MM" when its day is not the bar's); null for a check on closes. */
export function intradayTime(a: Pick<FiredAlert, "bar_date" | "intraday_at">): string | null {
  const at = a.intraday_at;
  if (!at) return null;
  return at.startsWith(`${a.bar_date} `) ? at.slice(a.bar_date.length + 1) : at;
}

/** The settings' intraday interval: a whole number of minutes, 1–60 (the backend's range). */
export const INTERVAL_RANGE = [1, 60] as const;
export function intervalProblem(minutes: number): boolean {
  return !Number.isInteger(minutes) || minutes < INTERVAL_RANGE[0] || minutes > INTERVAL_RANGE[1];
}

/** "2024-03-15" → 20240315 (the stock page's bar dates). */
export function barDate(iso: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso);
  return m ? Number(m[1]) * 10000 + Number(m[2]) * 100 + Number(m[3]) : null;
}

/** Alerts newer than the last one the user saw (the badge). */
export function unseen(history: FiredAlert[], lastSeenId: number): number {
  return history.filter((a) => a.id > lastSeenId).length;
}

export type ConditionKind = AlertCondition["type"];
/** Kinds a user rule can have (a stop-loss and a target come from the portfolio). */
export type RuleKind = Exclude<ConditionKind, "stop_loss" | "target_reached">;
export const RULE_KINDS: RuleKind[] = ["price_above", "price_below", "change_above", "change_below", "volume_ratio", "event", "phase_change", "health_change"];

export type RuleForm = { target: AlertTarget["type"]; code: string; kind: RuleKind; value: string; event: string; cooldown: string };

export const EMPTY_RULE: RuleForm = { target: "stock", code: "", kind: "price_above", value: "", event: "", cooldown: "1" };

export type Built = { ok: true; target: AlertTarget; condition: AlertCondition; cooldown: number | null } | { ok: false; problem: "needValue" | "needCode" | "needCooldown" };

/** The form as the backend takes it; the backend judges codes, ranges and names. */
export function buildRule(f: RuleForm): Built {
  const code = f.code.trim();
  if (f.target === "stock" && code === "") return { ok: false, problem: "needCode" };
  const target: AlertTarget = f.target === "stock" ? { type: "stock", code } : { type: f.target };
  const value = Number(f.value.trim());
  const needs = f.kind !== "event" && f.kind !== "phase_change" && f.kind !== "health_change";
  if (needs && (f.value.trim() === "" || Number.isNaN(value))) return { ok: false, problem: "needValue" };
  let condition: AlertCondition;
  switch (f.kind) {
    case "price_above":
    case "price_below":
      condition = { type: f.kind, level: value };
      break;
    case "change_above":
    case "change_below":
      condition = { type: f.kind, pct: value };
      break;
    case "volume_ratio":
      condition = { type: "volume_ratio", k: value };
      break;
    case "event":
      condition = { type: "event", event: f.event === "" ? null : f.event };
      break;
    case "phase_change":
    case "health_change":
      condition = { type: f.kind };
      break;
  }
  const cooldown = f.cooldown.trim() === "" ? null : Number(f.cooldown);
  if (cooldown != null && !(Number.isInteger(cooldown) && cooldown >= 0)) return { ok: false, problem: "needCooldown" };
  return { ok: true, target, condition, cooldown };
}
