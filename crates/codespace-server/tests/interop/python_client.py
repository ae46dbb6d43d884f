"""Drives a running or spawned `codespace` with the official Python MCP SDK.

Usage: python_client.py stdio BIN CONFIG | python_client.py http URL
Exits non-zero (with a message) on the first failed expectation.
"""

import asyncio
import base64
import json
import os
import sys
import uuid

from jsonschema import Draft202012Validator

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

        # Bytes that are not text cross once: the blob of a resource block after the text copy.
        b = await client.call_tool("read", {"workspace_id": "py", "path": "nul.bin"})
        s = b.structured_content
        check(not b.is_error and (s["encoding"], s["content"]) == ("resource", ""), f"[{mode}] binary read {s}")
        blob = b.content[1].resource
        check(base64.b64decode(blob.blob) == bytes(5) and blob.uri.startswith("codespace:nul.bin?"), f"[{mode}] blob {b.content}")
        check(json.loads(b.content[0].text) == s, f"[{mode}] the text copy equals structuredContent")

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
        await sweep(client, {t.name: t.output_schema for t in tools.tools}, mode)
    print(f"ok: {mode}")


async def sweep(client, schemas, mode):
    """Calls every tool but steer_complete (which needs a person's instruction) in the
    writable workspace `pw`, and checks each answer against the output schema `tools/list`
    gave, with a JSON Schema 2020-12 validator of its own (not only the SDK's)."""
    tag = uuid.uuid4().hex[:8]
    answered = set()

    async def ok(name, args):
        r = await client.call_tool(name, args)
        check(not r.is_error, f"[{mode}] {name} {args}: {r.content}")
        errors = [e.message for e in Draft202012Validator(schemas[name]).iter_errors(r.structured_content)]
        check(not errors, f"[{mode}] {name}'s answer does not fit its output schema: {errors}: {r.structured_content}")
        answered.add(name)
        return r.structured_content

    ws = {"workspace_id": "pw"}
    def add(path, text):
        return f"*** Begin Patch\n*** Add File: {path}\n+{text}\n*** End Patch\n"

    await ok("workspace_info", ws)
    cursor = (await ok("changes", ws))["cursor"]
    work = (await ok("work_open", {**ws, "title": "sweep"}))["work_id"]
    op = (await ok("apply_patch", {**ws, "patch": add(f"{tag}.txt", "one"), "work_id": work,
                                   "operation_key": f"key-{tag}", "expected_versions": {f"{tag}.txt": "absent"}}))["operation_id"]
    await ok("apply_patch", {**ws, "patch": add(f"{tag}-b.txt", "two"), "check_only": True})
    await ok("operation_status", {"operation_id": op})
    await ok("operation_revert", {**ws, "operation_id": op, "check_only": True})
    await ok("changes", {**ws, "since": cursor})
    await ok("read", {**ws, "path": f"{tag}.txt", "work_id": work})
    await ok("find", {**ws, "glob": "*.txt", "limit": 1})
    await ok("grep", {**ws, "pattern": "one", "fixed_strings": True})
    await ok("version", {**ws, "paths": [f"{tag}.txt", "missing.txt", "../outside"]})
    done = await ok("exec_command", {**ws, "command": ["sh", "-c", "echo out; echo err >&2; exit 3"], "wait_ms": 20000})
    check(done.get("exit_code") == 3, f"[{mode}] exec_command waited for the exit: {done}")
    cat = (await ok("exec_command", {**ws, "command": ["cat"]}))["process_id"]
    await ok("write_stdin", {"process_id": cat, "data": "echoed\n", "close": True})
    await ok("read_process", {"process_id": cat, "wait_ms": 20000})
    await ok("process_status", {"process_id": cat, "wait_ms": 20000})
    tty = (await ok("exec_command", {**ws, "command": ["sleep", "30"], "tty": True}))["process_id"]
    await ok("process_resize", {"process_id": tty, "rows": 30, "cols": 100})
    await ok("terminate_process", {"process_id": tty, "grace_ms": 0})
    await ok("process_status", {"process_id": tty, "wait_ms": 20000})
    await ok("steer_status", {"work_id": work})
    await ok("steer_claim_next", {"work_id": work})
    await ok("work_finish", {"work_id": work})
    hold = (await ok("approval_create", {"tool": "apply_patch", "arguments": {**ws, "patch": add(f"{tag}-c.txt", "held")}}))["approval_id"]
    await ok("approval_resolve", {"approval_id": hold, "decision": "grant"})
    await ok("operation_resume", {"approval_id": hold})
    missed = set(schemas) - answered - {"steer_complete"}
    check(not missed, f"[{mode}] the sweep left out {sorted(missed)}")


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
            b = await client.call_tool("read", {"workspace_id": "py", "path": "nul.bin"})
            s = b.structured_content
            check(b.content == [] and (s["encoding"], s["content"]) == ("base64", "AAAAAAA="), f"[structured-only] binary {b}")
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
