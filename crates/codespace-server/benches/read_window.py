"""Times `read` of 1 MiB windows of a big file through the official Python MCP SDK client,
and the same client receiving replies of the same size from a trivial server (the transfer
floor: what the client alone costs for a reply that long).

Usage: read_window.py BIN CONFIG WORKSPACE PATH WINDOW_STRIDE COUNT
Prints one JSON line: {"windows_ms": [...], "ping_ms": [...], "encoding": ..., "reply_bytes": ...,
"same_size_ms": [...]}.
"""

import asyncio
import base64
import json
import os
import sys
import time

from mcp import Client, StdioServerParameters


def window_bytes(r):
    """The window's bytes, wherever `encoding` says they are."""
    s = r.structured_content
    if s["encoding"] == "resource":
        return base64.b64decode(r.content[1].resource.blob)
    if s["encoding"] == "base64":
        return base64.b64decode(s["content"])
    return s["content"].encode()


def reply_bytes(r):
    """The length of the reply's line as JSON (compact, as the server writes it)."""
    result = r.model_dump(mode="json", by_alias=True, exclude_none=True)
    return len(json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}, separators=(",", ":")))


async def main():
    binary, config, ws, path, stride, count = sys.argv[1:7]
    env = {k: os.environ[k] for k in ("PATH", "HOME", "XDG_STATE_HOME", "RUST_LOG") if k in os.environ}
    target = StdioServerParameters(command=binary, args=["serve", "--config", config], env=env)
    windows, pings, encoding, size = [], [], None, 0
    async with Client(target, mode="legacy") as client:
        for _ in range(50):
            t = time.perf_counter()
            await client.send_ping()
            pings.append((time.perf_counter() - t) * 1000)
        for i in range(int(count)):
            args = {"workspace_id": ws, "path": path, "offset": i * int(stride)}
            t = time.perf_counter()
            r = await client.call_tool("read", args)
            windows.append((time.perf_counter() - t) * 1000)
            encoding = r.structured_content.get("encoding")
            if r.is_error or len(window_bytes(r)) != r.structured_content["byte_count"]:
                print(f"bad answer: {r.structured_content}", file=sys.stderr)
                sys.exit(1)
            size = reply_bytes(r)
    floor = os.path.join(os.path.dirname(os.path.abspath(__file__)), "same_size_server.py")
    same = StdioServerParameters(command=sys.executable, args=[floor, str(size)], env=env)
    same_size = []
    async with Client(same, mode="legacy") as client:
        for _ in range(int(count)):
            t = time.perf_counter()
            await client.call_tool("blob", {})
            same_size.append((time.perf_counter() - t) * 1000)
    print(json.dumps({"windows_ms": windows, "ping_ms": pings, "encoding": encoding,
                      "reply_bytes": size, "same_size_ms": same_size}))


asyncio.run(main())
