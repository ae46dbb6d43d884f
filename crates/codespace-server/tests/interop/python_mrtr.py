"""Calls a held tool through the official Python MCP SDK in its default `auto` mode (which
negotiates MCP 2026-07-28, where a held call answers `input_required`) with an elicitation
callback, and prints what the callback saw and what each call returned, as one JSON line.

Usage: python_mrtr.py BIN CONFIG WORKSPACE MODE [OTHER_STATE_HOME]
BIN may be the URL of a running server over HTTP (CONFIG is then unused).
MODE: accept (grant ticked), decline, exec (accept a held exec_command), revert (accept the
patch, then accept an operation_revert of it; the revert's call is shown), tamper (drive the
rounds by hand and send back a changed requestState, or one made for another request),
expire (drive the rounds by hand and answer after the state expired, then call again),
restart (take the question from one server, answer it to the next, started after it exited),
foreign (take the question from one server, answer it to one with another state directory,
so another key: OTHER_STATE_HOME).
"""

import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters
from mcp import types


def shown(r):
    """A call's result: an input_required one by its parts, a tool result by its content."""
    if isinstance(r, types.InputRequiredResult):
        return {"input_required": True, "keys": sorted((r.input_requests or {}).keys()),
                "state": r.request_state}
    return {"is_error": r.is_error, "result": r.structured_content,
            "text": r.content[0].text if r.content else None}


def tampered(state):
    """`state` with one character of its payload changed."""
    tag, body, seal = state.split(".")
    flip = "0" if body[-1] != "0" else "1"
    return ".".join([tag, body[:-1] + flip, seal])


async def main():
    binary, config, workspace, mode = sys.argv[1:5]
    env = {k: os.environ[k] for k in os.environ if k in ("PATH", "HOME", "XDG_STATE_HOME", "RUST_LOG")
           or k.startswith("CODESPACE_")}
    if binary.startswith("http"):
        target = binary
    else:
        target = StdioServerParameters(command=binary, args=["serve", "--config", config], env=env)
    seen = []

    async def on_elicit(context, params):
        seen.append({"message": params.message, "schema": params.requested_schema})
        if mode == "decline":
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={"grant": True})

    def patch(line):
        return f"*** Begin Patch\n*** Update File: a.txt\n@@\n top\n+{line}\n*** End Patch\n"

    args = {"workspace_id": workspace, "patch": patch("asked")}
    grant = {"codespace_hold": types.ElicitResult(action="accept", content={"grant": True})}
    out = {"mode": mode}
    async with Client(target, elicitation_callback=on_elicit) as client:
        out["protocol"] = client.protocol_version
        if mode in ("accept", "decline"):
            out["call"] = shown(await client.call_tool("apply_patch", args))
        elif mode == "revert":
            applied = await client.call_tool("apply_patch", args)
            revert = {"workspace_id": workspace, "operation_id": applied.structured_content["operation_id"]}
            out["call"] = shown(await client.call_tool("operation_revert", revert))
        elif mode == "exec":
            command = {"workspace_id": workspace, "command": ["sh", "-c", "echo ran > ran.txt"],
                       "wait_ms": 20000}
            out["call"] = shown(await client.call_tool("exec_command", command))
        else:
            first = await client.session.call_tool("apply_patch", args, allow_input_required=True)
            out["first"] = shown(first)
            state = first.request_state
            if mode == "tamper":
                retry = client.session.call_tool
                out["changed"] = shown(await retry("apply_patch", args, input_responses=grant,
                                                   request_state=tampered(state), allow_input_required=True))
                out["cut"] = shown(await retry("apply_patch", args, input_responses=grant,
                                               request_state=state[:-8], allow_input_required=True))
                other = {"workspace_id": workspace, "patch": patch("other")}
                out["other_request"] = shown(await retry("apply_patch", other, input_responses=grant,
                                                         request_state=state, allow_input_required=True))
            elif mode == "expire":
                await asyncio.sleep(2.5)
                out["late"] = shown(await client.session.call_tool(
                    "apply_patch", args, input_responses=grant, request_state=state,
                    allow_input_required=True))
                out["again"] = shown(await client.call_tool("apply_patch", args))
    if mode in ("restart", "foreign"):
        if mode == "foreign":
            other = dict(env, XDG_STATE_HOME=sys.argv[5])
            target = StdioServerParameters(command=binary, args=["serve", "--config", config], env=other)
        async with Client(target, elicitation_callback=on_elicit) as client:
            out["after_restart"] = shown(await client.session.call_tool(
                "apply_patch", args, input_responses=grant, request_state=out["first"]["state"],
                allow_input_required=True))
    out["seen"] = seen
    print(json.dumps(out, ensure_ascii=True))


asyncio.run(main())
