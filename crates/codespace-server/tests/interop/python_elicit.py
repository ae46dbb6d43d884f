"""Calls a held `apply_patch` through the official Python MCP SDK with an elicitation
callback that answers as MODE says, and prints what the callback saw and what the call
returned, as one JSON line.

Usage: python_elicit.py BIN CONFIG WORKSPACE MODE [FILE]
FILE: the file the patch updates (default a.txt; its first line must be "top").
MODE: accept (grant ticked), untick (accept, grant unticked), decline, cancel, late (answers
after the server's wait ended), abandon (the call is cancelled while the question is open),
revert (accept the patch, then accept an operation_revert of it; the revert's call is shown).
"""

import asyncio
import json
import os
import sys

import anyio
from mcp import Client, StdioServerParameters
from mcp import types


async def main():
    binary, config, workspace, mode = sys.argv[1:5]
    target_file = sys.argv[5] if len(sys.argv) > 5 else "a.txt"
    env = {k: os.environ[k] for k in os.environ if k in ("PATH", "HOME", "XDG_STATE_HOME", "RUST_LOG")
           or k.startswith("CODESPACE_")}
    target = StdioServerParameters(command=binary, args=["serve", "--config", config], env=env)
    seen = []

    async def on_elicit(context, params):
        seen.append({"message": params.message, "schema": params.requested_schema})
        if mode in ("accept", "revert"):
            return types.ElicitResult(action="accept", content={"grant": True})
        if mode == "untick":
            return types.ElicitResult(action="accept", content={"grant": False})
        if mode == "decline":
            return types.ElicitResult(action="decline")
        if mode == "cancel":
            return types.ElicitResult(action="cancel")
        # late and abandon: nobody answers in time.
        await anyio.sleep(5)
        return types.ElicitResult(action="accept", content={"grant": True})

    patch = f"*** Begin Patch\n*** Update File: {target_file}\n@@\n top\n+elicited\n*** End Patch\n"
    out = {"mode": mode}
    async with Client(target, mode="legacy", elicitation_callback=on_elicit) as client:
        args = {"workspace_id": workspace, "patch": patch}
        if mode == "abandon":
            with anyio.move_on_after(1.0) as scope:
                await client.call_tool("apply_patch", args)
            out["abandoned"] = scope.cancelled_caught
            # The connection still serves.
            info = await client.call_tool("workspace_info", {})
            out["after"] = not info.is_error
        else:
            r = await client.call_tool("apply_patch", args)
            if mode == "revert":
                op = r.structured_content["operation_id"]
                revert = {"workspace_id": workspace, "operation_id": op}
                r = await client.call_tool("operation_revert", revert)
            out["is_error"] = r.is_error
            out["result"] = r.structured_content
            out["text"] = r.content[0].text if r.content else None
    out["seen"] = seen
    print(json.dumps(out, ensure_ascii=True))


asyncio.run(main())
