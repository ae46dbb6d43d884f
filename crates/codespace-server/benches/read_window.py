"""Times `read` of 1 MiB windows of a big file through the official Python MCP SDK client.

Usage: read_window.py BIN CONFIG WORKSPACE PATH WINDOW_STRIDE COUNT
Prints one JSON line: {"windows_ms": [...], "ping_ms": [...], "encoding": ...}.
"""

import asyncio
import base64
import json
import os
import sys
import time

from mcp import Client, StdioServerParameters


async def main():
    binary, config, ws, path, stride, count = sys.argv[1:7]
    env = {k: os.environ[k] for k in ("PATH", "HOME", "XDG_STATE_HOME", "RUST_LOG") if k in os.environ}
    target = StdioServerParameters(command=binary, args=["serve", "--config", config], env=env)
    windows, pings, encoding = [], [], None
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
            s = r.structured_content
            encoding = s.get("encoding")
            if r.is_error or (encoding == "base64" and len(base64.b64decode(s["content"])) != s["byte_count"]):
                print(f"bad answer: {s}", file=sys.stderr)
                sys.exit(1)
    print(json.dumps({"windows_ms": windows, "ping_ms": pings, "encoding": encoding}))


asyncio.run(main())
