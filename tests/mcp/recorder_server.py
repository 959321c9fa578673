"""A small stdio MCP server on the official Python SDK, for the client tests: it writes every
call it receives to a log file (argv[1]), so a test can tell whether a call reached it.

    record(note, seconds=0) not read-only: appends the note (the approval gate must stop it
                  unasked), after waiting `seconds`
    peek()        read-only: the notes so far
    crash(attempt) read-only: the process dies mid-call (the client restarts it next call)
    slow(s, tag)  read-only: waits s seconds (two calls overlap)
    grow()        adds the tool `extra` and sends notifications/tools/list_changed

record and slow also write when each call started and ended to LOG.spans
("TOOL TAG START END", seconds since the epoch), so a test can tell which calls overlapped.
"""

import os
import sys
import time

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

LOG = sys.argv[1]
server = MCPServer("recorder", version="1.0.0")


def log(line):
    with open(LOG, "a", encoding="utf-8") as f:
        f.write(line + "\n")


def span(tool, tag, start):
    with open(LOG + ".spans", "a", encoding="utf-8") as f:
        f.write(f"{tool} {tag} {start:.6f} {time.time():.6f}\n")


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
async def record(note: str, seconds: float = 0) -> str:
    """Append a note to the log (after waiting `seconds`)."""
    import anyio

    start = time.time()
    await anyio.sleep(seconds)
    log(f"record {note}")
    span("record", note, start)
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

    start = time.time()
    await anyio.sleep(seconds)
    log(f"slow {tag}")
    span("slow", tag, start)
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
