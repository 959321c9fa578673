"""An MCP server on the official Python SDK for the client's limits: many tools, names that
are one after cleaning, an answer over the client's size limit, and an HTTP endpoint that
checks the Authorization header it is sent.

    wide_server.py [--tools N] [--pad-kib K] [--clash] [--big] [--log FILE]
                   [--http PORT --auth VALUE]

    --tools N   read-only tools t0001 … tNNNN, in that order
    --pad-kib K each numbered tool's description padded to K KiB (a long tool list)
    --clash     also the read-only tools `get.quote` and `get_quote` (one after cleaning)
    --big       also `big(mib)`: answers `mib` MiB of text in one message
    --log FILE  appends each call ("call NAME") and, over HTTP, each Authorization header
                received ("auth VALUE")
    --http PORT streamable HTTP on 127.0.0.1:PORT at /mcp instead of stdio; prints
                "listening on http://127.0.0.1:PORT/mcp" on stderr once it accepts
    --auth V    over HTTP, answers 401 to any request whose Authorization is not exactly V
"""

import argparse
import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

parser = argparse.ArgumentParser()
parser.add_argument("--tools", type=int, default=0)
parser.add_argument("--pad-kib", type=int, default=0)
parser.add_argument("--clash", action="store_true")
parser.add_argument("--big", action="store_true")
parser.add_argument("--log")
parser.add_argument("--http", type=int)
parser.add_argument("--auth")
opts = parser.parse_args()

server = MCPServer("wide", version="1.0.0")
READ_ONLY = ToolAnnotations(read_only_hint=True)


def log(line):
    if opts.log:
        with open(opts.log, "a", encoding="utf-8") as f:
            f.write(line + "\n")


def numbered(name):
    def tool() -> str:
        log(f"call {name}")
        return name

    doc = f"Numbered tool {name}."
    tool.__doc__ = doc + " " + "p" * max(0, opts.pad_kib * 1024 - len(doc) - 1)
    return tool


for i in range(1, opts.tools + 1):
    name = f"t{i:04d}"
    server.add_tool(numbered(name), name=name, annotations=READ_ONLY)

if opts.clash:
    for name in ["get.quote", "get_quote"]:
        server.add_tool(numbered(name), name=name, annotations=READ_ONLY)

if opts.big:

    @server.tool(annotations=READ_ONLY)
    def big(mib: int) -> str:
        """Answers `mib` MiB of text."""
        log(f"call big {mib}")
        return "x" * (mib * 1024 * 1024)


def checked(app, expected):
    """The app behind a check of the Authorization header (exactly `expected`)."""

    async def guarded(scope, receive, send):
        if scope["type"] == "http":
            got = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
            log(f"auth {got}")
            if expected is not None and got != expected:
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"text/plain")],
                    }
                )
                await send({"type": "http.response.body", "body": b"wrong credentials"})
                return
        await app(scope, receive, send)

    return guarded


if __name__ == "__main__":
    if opts.http is None:
        server.run()
    else:
        import uvicorn

        app = checked(server.streamable_http_app(), opts.auth)

        class Announce(uvicorn.Server):
            async def startup(self, sockets=None):
                await super().startup(sockets=sockets)
                print(
                    f"listening on http://127.0.0.1:{opts.http}/mcp",
                    file=sys.stderr,
                    flush=True,
                )

        Announce(
            uvicorn.Config(app, host="127.0.0.1", port=opts.http, log_level="warning")
        ).run()
