import { fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import shared from "./fixtures/stock_codes.json";
import { findStockCodes, linkStockCodes, stockLinkClick } from "./stockLinks";

describe("findStockCodes", () => {
  // The backend's cases too (wyckoff_engine::codes): the two scanners cannot drift apart.
  it.each(shared.map((c) => [c.why, c.text, c.codes] as const))("%s: %s", (_why, text, want) => {
    expect(findStockCodes(text).map((h) => h.code)).toEqual(want);
  });

  it("gives each code's place in the text as written", () => {
    expect(findStockCodes("看６００５１９和600519")).toEqual([
      { code: "600519", index: 1, length: 6 },
      { code: "600519", index: 8, length: 6 },
    ]);
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

  it("links a full-width code as written, with its ASCII code", () => {
    const root = document.createElement("div");
    root.textContent = "看６００５１９";
    linkStockCodes(root);
    const link = root.querySelector<HTMLElement>(".stock-link");
    expect([link?.dataset.code, link?.textContent, root.textContent]).toEqual(["600519", "６００５１９", "看６００５１９"]);
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
