// The statement import refuses a file over the backend's 32 MB cap before reading it, and
// sends one exactly at the cap.
import { afterEach, describe, expect, it, vi } from "vitest";
import { act, cleanup, fireEvent, render, waitFor } from "@testing-library/react";

const mocks = vi.hoisted(() => ({ journalImport: vi.fn() }));
vi.mock("../bindings", () => ({ commands: mocks }));

import ImportFills, { STATEMENT_MAX_BYTES } from "./ImportFills";

afterEach(() => {
  cleanup();
  vi.clearAllMocks();
});

const byId = (id: string) => document.getElementById(id) as HTMLElement;

/** A small file that says it is `size` bytes (a real 32 MB one would be read whole). */
const fileOf = (size: number) => {
  const file = new File([new TextEncoder().encode("成交日期,证券代码\n")], "big.csv", { type: "text/csv" });
  Object.defineProperty(file, "size", { value: size });
  return file;
};

const choose = async (file: File) => {
  await act(async () => {
    fireEvent.change(byId("ji-file"), { target: { files: [file] } });
  });
};

describe("the statement's size cap", () => {
  it("is 32 MB, as the backend's", () => {
    expect(STATEMENT_MAX_BYTES).toBe(33_554_432);
  });

  it("refuses a file one byte over it without reading or sending it", async () => {
    render(<ImportFills onImported={() => {}} />);
    await choose(fileOf(STATEMENT_MAX_BYTES + 1));
    await waitFor(() => expect(document.getElementById("ji-error-message")).toBeTruthy());
    expect(byId("ji-error-message").textContent).toBe("33554433 字节，超过交割单导入上限 33554432 字节（32 MB）；请按年份分段导出");
    expect(byId("ji-nothing")).toBeTruthy();
    expect(mocks.journalImport).not.toHaveBeenCalled();
  });

  it("sends a file exactly at it", async () => {
    mocks.journalImport.mockResolvedValue({ status: "error", error: { kind: "invalid_input", message: "找不到表头" } });
    render(<ImportFills onImported={() => {}} />);
    await choose(fileOf(STATEMENT_MAX_BYTES));
    await waitFor(() => expect(mocks.journalImport).toHaveBeenCalledTimes(1));
  });
});
