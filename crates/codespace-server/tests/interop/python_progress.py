"""Calls one slow `grep` through the official Python MCP SDK with a progress callback and
prints what the callback saw and what the call returned, as one JSON line.

Usage: python_progress.py BIN CONFIG WORKSPACE PATTERN
"""

import asyncio
import json
import os
import sys
import time

from mcp import Client, StdioServerParameters


async def main():
    binary, config, workspace, pattern = sys.argv[1:5]
    env = {k: os.environ[k] for k in ("PATH", "HOME", "XDG_STATE_HOME", "RUST_LOG") if k in os.environ}
    target = StdioServerParameters(command=binary, args=["serve", "--config", config], env=env)
    seen = []

    async def on_progress(progress, total, message):
        seen.append({"progress": progress, "total": total, "message": message})

    async with Client(target) as client:
        started = time.monotonic()
        r = await client.call_tool(
            "grep", {"workspace_id": workspace, "pattern": pattern}, progress_callback=on_progress
        )
        elapsed_ms = round((time.monotonic() - started) * 1000)
    print(json.dumps({"progress": seen, "is_error": r.is_error, "result": r.structured_content,
                      "elapsed_ms": elapsed_ms}))


asyncio.run(main())
