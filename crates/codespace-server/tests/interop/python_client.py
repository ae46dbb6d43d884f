"""Drives a running or spawned `codespace` with the official Python MCP SDK.

Usage: python_client.py stdio BIN CONFIG | python_client.py http URL
Exits non-zero (with a message) on the first failed expectation.
"""

import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters
from mcp.client.session import ClientSession

EXPECTED_TOOLS = [
    "workspace_info", "read", "find", "apply_patch", "operation_status", "exec_command",
    "write_stdin", "read_process", "process_status", "process_resize", "terminate_process",
    "work_open", "steer_status", "steer_claim_next", "steer_complete", "work_finish",
    "approval_create", "approval_resolve", "operation_resume", "grep", "version", "changes",
    "operation_revert",
]


def check(cond, msg):
    if not cond:
        print(f"FAIL: {msg}", file=sys.stderr)
        sys.exit(1)


async def exercise(target, mode):
    async with Client(target, mode=mode) as client:
        tools = await client.list_tools()
        names = [t.name for t in tools.tools]
        check(names == EXPECTED_TOOLS, f"[{mode}] tools {names}")
        for t in tools.tools:
            check(t.output_schema is not None, f"[{mode}] {t.name} has an outputSchema")

        r = await client.call_tool("read", {"workspace_id": "py", "path": "hello.txt"})
        check(not r.is_error, f"[{mode}] read succeeded: {r}")
        check(r.structured_content["content"] == "hello from python\n", f"[{mode}] content {r.structured_content}")
        check(r.structured_content["version"].startswith("sha256:"), f"[{mode}] version")

        f = await client.call_tool("find", {"workspace_id": "py", "glob": "**/*.txt"})
        check(f.structured_content["paths"] == ["hello.txt", "sub/deep.txt"], f"[{mode}] find {f.structured_content}")

        g = await client.call_tool("grep", {"workspace_id": "py", "pattern": "deep"})
        check([m["path"] for m in g.structured_content["matches"]] == ["sub/deep.txt"], f"[{mode}] grep")

        e = await client.call_tool("read", {"workspace_id": "py", "path": "../escape"})
        check(e.is_error, f"[{mode}] escape refused")
        body = json.loads(e.content[0].text)
        check(body["code"] == "PATH_ESCAPE", f"[{mode}] error body {body}")

        # SEP-1303: arguments that do not fit the schema are a tool result the model sees,
        # naming the field, not a protocol error.
        bad = await client.call_tool("read", {"workspace_id": "py"})
        check(bad.is_error, f"[{mode}] missing path is a tool error: {bad}")
        body = json.loads(bad.content[0].text)
        check(body["code"] == "INVALID_ARGUMENTS" and "path" in body["message"], f"[{mode}] {body}")
        bad = await client.call_tool("read", {"workspace_id": "py", "path": 7})
        check(bad.is_error and "invalid type" in bad.content[0].text, f"[{mode}] wrong type: {bad}")

        info = await client.call_tool("workspace_info", {})
        check(not info.is_error, f"[{mode}] bare workspace_info fits its output schema: {info}")
    print(f"ok: {mode}")


STRUCTURED_ONLY = "codespace/structuredContentOnly"


async def structured_only(target):
    """A session that declares the structured-only capability: the SDK has no setting for
    experimental capabilities, so its capability builder is wrapped for this session."""
    original = ClientSession._build_capabilities

    def declaring(self, *args, **kwargs):
        caps = original(self, *args, **kwargs)
        caps.experimental = {STRUCTURED_ONLY: {}}
        return caps

    ClientSession._build_capabilities = declaring
    try:
        async with Client(target, mode="legacy") as client:
            r = await client.call_tool("read", {"workspace_id": "py", "path": "hello.txt"})
            check(not r.is_error, f"[structured-only] read succeeded: {r}")
            check(r.content == [], f"[structured-only] no text copy: {r.content}")
            check(r.structured_content["content"] == "hello from python\n", f"[structured-only] {r.structured_content}")
            e = await client.call_tool("read", {"workspace_id": "py", "path": "../escape"})
            check(e.is_error and json.loads(e.content[0].text)["code"] == "PATH_ESCAPE", f"[structured-only] {e}")
    finally:
        ClientSession._build_capabilities = original
    print("ok: structured-only")


async def main():
    kind = sys.argv[1]
    if kind == "stdio":
        # The SDK passes the server only a default environment; the private state directory
        # is passed on explicitly so that the server never touches the user's own ledger.
        env = {k: os.environ[k] for k in ("PATH", "HOME", "XDG_STATE_HOME", "RUST_LOG") if k in os.environ}
        target = StdioServerParameters(command=sys.argv[2], args=["serve", "--config", sys.argv[3]], env=env)
    else:
        target = sys.argv[2]
    for mode in ("auto", "legacy"):
        await exercise(target, mode)
    await structured_only(target)


asyncio.run(main())
