// Settings → Chat bots: the panel's own zh / en strings.
import { localTexts } from "../i18n";

const zh = {
  title: "聊天机器人",
  intro: "手机上问桌面：陌生人只会收到配对码，主人批准后才能对话。添加机器人和令牌：wyckoff bot add / wyckoff bot secret。",
  none: "还没有机器人。",
  tokenSet: "令牌已设置",
  tokenMissing: "缺少令牌",
  limits: "每人每天 {tokens} tokens，每分钟 {per} 条",
  senders: "已配对",
  noSenders: "还没有配对的用户。",
  approver: "可审批",
  unpair: "解除配对",
  pending: "等待配对",
  noPending: "没有等待中的配对码。",
  pairAs: "批准 {label} 使用 {bot}",
  codeLabel: "配对码",
  pair: "批准配对",
  paired: "已配对。",
  expires: "有效至 {at}",
  failed: "没有完成：{message}",
};

const en: Record<keyof typeof zh, string> = {
  title: "Chat bots",
  intro: "Ask the desk from your phone: a stranger only gets a pairing code until you approve it. Add bots and tokens with wyckoff bot add / wyckoff bot secret.",
  none: "No bots yet.",
  tokenSet: "token set",
  tokenMissing: "token missing",
  limits: "{tokens} tokens a day, {per} messages a minute per sender",
  senders: "Paired",
  noSenders: "No paired senders yet.",
  approver: "may approve",
  unpair: "Unpair",
  pending: "Waiting to pair",
  noPending: "No pairing codes waiting.",
  pairAs: "Let {label} use {bot}",
  codeLabel: "Pairing code",
  pair: "Approve pairing",
  paired: "Paired.",
  expires: "until {at}",
  failed: "Not done: {message}",
};

export const botsText = localTexts(zh, en);
export type BotsT = ReturnType<typeof botsText>;
