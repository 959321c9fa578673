import { describe, expect, it } from "vitest";
import { NAV_ORDER, shortcutFor, type KeyPress } from "./shortcuts";

const press = (key: string, mods: Partial<KeyPress> = {}): KeyPress => ({ key, ctrlKey: false, metaKey: false, altKey: false, inTextField: false, ...mods });

describe("shortcutFor", () => {
  it.each<[string, KeyPress, boolean, ReturnType<typeof shortcutFor>]>([
    ["? opens the help", press("?"), false, { type: "help" }],
    ["? closes it again", press("?"), true, { type: "close" }],
    ["Esc closes the help", press("Escape"), true, { type: "close" }],
    ["Esc without the help is left to the page", press("Escape"), false, null],
    ["? typed in a text field is text", press("?", { inTextField: true }), false, null],
    ["Ctrl+K searches", press("k", { ctrlKey: true }), false, { type: "search" }],
    ["Cmd+K searches", press("K", { metaKey: true }), false, { type: "search" }],
    ["Ctrl+K works from a text field", press("k", { ctrlKey: true, inTextField: true }), false, { type: "search" }],
    ["Alt+1 is the chat", press("1", { altKey: true }), false, { type: "nav", target: "nav-chat" }],
    ["Alt+4 is the portfolio", press("4", { altKey: true }), false, { type: "nav", target: "nav-portfolio" }],
    [`Alt+${NAV_ORDER.length} is the last entry`, press(String(NAV_ORDER.length), { altKey: true }), false, { type: "nav", target: NAV_ORDER[NAV_ORDER.length - 1] }],
    ["Alt+9 beyond the list does nothing", press("9", { altKey: true }), false, null],
    ["Ctrl+Alt+1 is not ours", press("1", { altKey: true, ctrlKey: true }), false, null],
    ["a plain letter is not ours", press("k"), false, null],
  ])("%s", (_name, e, helpOpen, want) => {
    expect(shortcutFor(e, helpOpen)).toEqual(want);
  });
});
