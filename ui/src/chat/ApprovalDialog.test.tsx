import { afterEach, describe, expect, it } from "vitest";
import { cleanup, fireEvent, render } from "@testing-library/react";
import type { ApprovalRequest } from "../bindings";
import ApprovalDialog from "./ApprovalDialog";
import { LanguageContext } from "../i18n";

afterEach(cleanup);

const exec: ApprovalRequest = {
  id: "call_git",
  tool: "exec_command",
  display_name: "执行命令",
  args: { command: "git status --short" },
  available_decisions: ["allow_once", "allow_always", "edit", "deny"],
  always_allows: { type: "base_command", base: "git" },
};

const scopeText = () => document.getElementById("approval-always-allows")?.textContent ?? null;

describe("ApprovalDialog says what always allow allows from now on", () => {
  it("names the base command for exec_command, and what still asks", () => {
    render(<ApprovalDialog request={exec} onDecide={() => {}} />);
    const text = scopeText();
    expect(text).toContain("本会话中不再询问");
    expect(text).toContain("每条「git …」命令（任意参数）");
    expect(text).toContain("&&");
  });

  it("names the whole tool for other tools, in English too", () => {
    render(
      <LanguageContext.Provider value="en">
        <ApprovalDialog
          request={{
            ...exec,
            tool: "write_file",
            display_name: "写入文件",
            args: { path: "a.md", content: "x" },
            always_allows: { type: "tool" },
          }}
          onDecide={() => {}}
        />
      </LanguageContext.Provider>,
    );
    expect(scopeText()).toContain("every 写入文件 call, whatever its arguments");
  });

  it("says nothing when always allow is not offered, or while editing", () => {
    const { rerender } = render(
      <ApprovalDialog
        request={{ ...exec, available_decisions: ["allow_once", "edit", "deny"], always_allows: null }}
        onDecide={() => {}}
      />,
    );
    expect(scopeText()).toBeNull();
    rerender(<ApprovalDialog request={exec} onDecide={() => {}} />);
    expect(scopeText()).not.toBeNull();
    fireEvent.click(document.getElementById("approval-edit") as HTMLElement);
    expect(scopeText()).toBeNull();
  });
});
