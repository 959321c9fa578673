"""Drives `wyckoff mcp serve` with the official Python MCP SDK (PyPI `mcp`) and prints one JSON
report on stdout for tests/tests/mcp_server.rs to check.

    engine_client.py stdio WYCKOFF_BIN CODE UNKNOWN_CODE
        launches `WYCKOFF_BIN mcp serve` over stdio (environment inherited: WYCKOFF_HOME,
        WYCKOFF_OFFLINE), lists tools, calls analyze_stock on CODE, screen_stocks with a
        progress token, analyze_stock on UNKNOWN_CODE and get_market_map as of 2020-02-03.
    engine_client.py http URL CODE
        connects over streamable HTTP, lists tools and calls analyze_stock on CODE.
"""

import asyncio
import json
import os
import sys

from mcp import Client
from mcp.client.stdio import StdioServerParameters


def tool_list(listed):
    return [
        {
            "name": t.name,
            "read_only_hint": t.annotations.read_only_hint if t.annotations else None,
            "input_schema": t.input_schema,
        }
        for t in listed.tools
    ]


def result(r):
    texts = [c.text for c in r.content if getattr(c, "type", None) == "text"]
    return {"is_error": r.is_error, "text": "\n".join(texts), "structured": r.structured_content}


async def session(client, code, unknown):
    report = {}
    report["server"] = {
        "name": client.server_info.name if getattr(client, "server_info", None) else None,
    }
    report["tools"] = tool_list(await client.list_tools())
    report["analyze"] = result(await client.call_tool("analyze_stock", {"code": code}))
    if unknown is not None:
        progress = []

        async def on_progress(value, total, message):
            progress.append({"progress": value, "total": total, "message": message})

        screened = await client.call_tool(
            "screen_stocks", {"board": "all"}, progress_callback=on_progress
        )
        report["screen"] = result(screened)
        report["progress"] = progress
        report["unknown"] = result(await client.call_tool("analyze_stock", {"code": unknown}))
        report["market_map"] = result(
            await client.call_tool("get_market_map", {"as_of": "2020-02-03"})
        )
    return report


async def main(argv):
    mode = argv[1]
    if mode == "stdio":
        binary, code, unknown = argv[2], argv[3], argv[4]
        params = StdioServerParameters(
            command=binary, args=["mcp", "serve"], env=dict(os.environ)
        )
        async with Client(params, raise_exceptions=True) as client:
            report = await session(client, code, unknown)
    elif mode == "http":
        url, code = argv[2], argv[3]
        async with Client(url, raise_exceptions=True) as client:
            report = await session(client, code, None)
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    print(json.dumps(report, ensure_ascii=False))


if __name__ == "__main__":
    asyncio.run(main(sys.argv))
