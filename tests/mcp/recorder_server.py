"""A small stdio MCP server on the official Python SDK, for the client tests: it writes every
call it receives to a log file (argv[1]), so a test can tell whether a call reached it.

    record(note)  not read-only: appends the note (the approval gate must stop it unasked)
    peek()        read-only: the notes so far
    crash(attempt) read-only: the process dies mid-call (the client restarts it next call)
    slow(s, tag)  read-only: waits s seconds (two calls overlap)
    grow()        adds the tool `extra` and sends notifications/tools/list_changed
"""

import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

LOG = sys.argv[1]
server = MCPServer("recorder", version="1.0.0")


def log(line):
    with open(LOG, "a", encoding="utf-8") as f:
        f.write(line + "\n")


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
def record(note: str) -> str:
    """Append a note to the log."""
    log(f"record {note}")
    return f"recorded {note}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def peek() -> str:
    """The notes recorded so far."""
    log("peek")
    with open(LOG, encoding="utf-8") as f:
        return f.read()


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def crash(attempt: int = 0) -> str:
    """Dies in the middle of the call."""
    log(f"crash {attempt} pid {os.getpid()}")
    os._exit(3)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def slow(seconds: float, tag: str) -> str:
    """Waits, then answers (calls may overlap)."""
    import anyio

    await anyio.sleep(seconds)
    log(f"slow {tag}")
    return f"slow {tag}"


def extra() -> str:
    """A tool that exists only after grow()."""
    log("extra")
    return "extra"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def grow(ctx: Context) -> str:
    """Adds the tool `extra` and says the tool list changed."""
    log("grow")
    server.add_tool(extra, annotations=ToolAnnotations(read_only_hint=True))
    await ctx.session.send_tool_list_changed()
    return "grown"


if __name__ == "__main__":
    server.run()
