// Settings → About and updates: the panel's own zh / en strings.
import { localTexts } from "../i18n";

const zh = {
  title: "关于与更新",
  version: "当前版本 {version}",
  check: "检查更新",
  checking: "正在检查…",
  upToDate: "已是最新版本。",
  available: "有新版本 {version}",
  released: "发布于 {date}",
  notes: "更新说明",
  install: "下载并安装",
  downloading: "正在下载… {done}",
  downloadingOf: "正在下载… {done} / {total}",
  verifying: "正在校验签名…",
  installed: "版本 {version} 已安装，重启后生效。",
  restart: "立即重启",
  refused: "已拒绝版本 {version}：{reason}。当前版本继续运行。",
  gone: "更新服务器上已没有这个版本，请重新检查。",
  cannotInstall: "这份安装不能自动更新：{note}",
  failed: "没有完成：{message}",
  signedNote: "更新包须由本项目的密钥签名，签名不符的下载不会安装。",
};

const en: Record<keyof typeof zh, string> = {
  title: "About and updates",
  version: "Version {version}",
  check: "Check for updates",
  checking: "Checking…",
  upToDate: "This is the latest version.",
  available: "Version {version} is available",
  released: "released {date}",
  notes: "Release notes",
  install: "Download and install",
  downloading: "Downloading… {done}",
  downloadingOf: "Downloading… {done} of {total}",
  verifying: "Checking the signature…",
  installed: "Version {version} is installed; it runs after a restart.",
  restart: "Restart now",
  refused: "Version {version} was refused: {reason}. This version keeps running.",
  gone: "The update server no longer offers this version; check again.",
  cannotInstall: "This copy cannot update itself: {note}",
  failed: "Not done: {message}",
  signedNote: "Updates must be signed with the project's key; a download whose signature does not match is not installed.",
};

export const updateText = localTexts(zh, en);
