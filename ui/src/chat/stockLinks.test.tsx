import { fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { findStockCodes, linkStockCodes, stockLinkClick } from "./stockLinks";

describe("findStockCodes", () => {
  it.each([
    ["平安银行（000001）的分析", ["000001"]],
    ["600519 and 300750, 688981; 830799 920001", ["600519", "300750", "688981", "830799", "920001"]],
    ["成交额 100000 元，日期 202406", []],
    ["1000001 is seven digits, 0000012 too", []],
    ["price 600519.5 is a number; 600519. ends a sentence", ["600519"]],
    ["x600519y", ["600519"]],
    ["", []],
  ])("%s", (text, want) => {
    expect(findStockCodes(text).map((h) => h.code)).toEqual(want);
  });
});

describe("linkStockCodes", () => {
  it("wraps codes in text nodes, leaves code blocks and links alone, and is idempotent", () => {
    const root = document.createElement("div");
    root.innerHTML = "<p>看 000001 和 <strong>600519</strong></p><pre>300750</pre><a href='#'>688981</a>";
    linkStockCodes(root);
    linkStockCodes(root);
    const links = Array.from(root.querySelectorAll<HTMLElement>(".stock-link"));
    expect(links.map((l) => l.dataset.code)).toEqual(["000001", "600519"]);
    expect(root.querySelector("p")?.textContent).toBe("看 000001 和 600519");
    expect(root.querySelector("pre")?.textContent).toBe("300750");
  });

  it("never turns text into markup", () => {
    const root = document.createElement("div");
    root.textContent = "<img src=x onerror=alert(1)> 000001";
    linkStockCodes(root);
    expect(root.querySelector("img")).toBeNull();
    expect(root.querySelectorAll(".stock-link")).toHaveLength(1);
  });

  it("a click on a link opens its stock", () => {
    const open = vi.fn();
    render(
      <div onClick={stockLinkClick(open)}>
        <button className="stock-link" data-code="000001">
          000001
        </button>
        <span>other</span>
      </div>,
    );
    fireEvent.click(screen.getByText("other"));
    expect(open).not.toHaveBeenCalled();
    fireEvent.click(screen.getByText("000001"));
    expect(open).toHaveBeenCalledWith("000001");
  });
});
