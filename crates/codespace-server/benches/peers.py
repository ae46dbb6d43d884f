"""CodeSpace beside peer MCP servers, all through the official Python MCP SDK client in one run.

Usage: peers.py BIN CONFIG WORKSPACE_DIR TOOLS_DIR
Prints one JSON object: per server, the `tools/list` sizes and SDK round trips, and the
one-call command rows (`true`, `python3 -c 'print(1)'`, `seq 1 200000` drained whole); a peer
that cannot be started is named under "missing" with why.
"""

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time

from mcp import Client, StdioServerParameters

ROUNDS = 30
SEQ_BYTES = len(subprocess.run(["seq", "1", "200000"], capture_output=True, check=True).stdout)
MAX_WAIT_MS = 55000
BIG = 262144


def servers(binary, config, ws, tools):
    """name -> (argv, extra env, which command rows it takes)."""
    node = os.path.join(tools, "node", "node_modules", "@modelcontextprotocol")
    return {
        "codespace": ([binary, "serve", "--config", config, "--operations-db", ":memory:"], {}),
        "cli-mcp-server": (
            [os.path.join(tools, "cli-mcp-server", "bin", "cli-mcp-server")],
            {"ALLOWED_DIR": ws, "ALLOWED_COMMANDS": "true,python3,seq", "ALLOWED_FLAGS": "-c",
             "ALLOW_SHELL_OPERATORS": "false"},
        ),
        "mcp-shell-server": (
            [os.path.join(tools, "mcp-shell-server", "bin", "mcp-shell-server")],
            {"ALLOW_COMMANDS": "true,python3,seq", "MCP_SHELL_OUTPUT_LIMIT_BYTES": str(64 << 20)},
        ),
        "server-filesystem": (["node", os.path.join(node, "server-filesystem", "dist", "index.js"), ws], {}),
        "server-everything": (["node", os.path.join(node, "server-everything", "dist", "index.js"), "stdio"], {}),
    }


def env_with(extra):
    keep = ("PATH", "HOME", "XDG_STATE_HOME", "RUST_LOG", "LANG")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update(extra)
    return env


def raw_tools_list(argv, env):
    """`tools/list` over raw stdio lines: the whole result's compact JSON size, and the part a
    client puts in a model's context (each tool's name, title, description, input schema)."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env, text=True)
    def ask(msg):
        proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError("the server closed its stdout")
            reply = json.loads(line)
            if reply.get("id") == msg["id"]:
                return reply
    try:
        ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}})
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        result = ask({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})["result"]
    finally:
        proc.stdin.close()
        proc.kill()
        proc.wait()
    compact = lambda v: len(json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode())
    context = sum(compact({k: t[k] for k in ("name", "title", "description", "inputSchema") if k in t})
                  for t in result["tools"])
    return {"tools": len(result["tools"]), "bytes": compact(result), "context_bytes": context}


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def codespace_command(client, argv):
    """One command to its exit with its whole output: (calls, bytes of output)."""
    args = {"workspace_id": "w", "command": argv, "wait_ms": MAX_WAIT_MS, "max_bytes": BIG}
    r = await client.call_tool("exec_command", args)
    s = r.structured_content
    assert not r.is_error, s
    calls, out = 1, s.get("output") or {}
    got, cursor, eof = out.get("chunk", ""), out.get("cursor", 0), out.get("eof", False)
    while not eof:
        r = await client.call_tool("read_process", {
            "process_id": s["process_id"], "cursor": cursor, "max_bytes": BIG,
            "min_bytes": BIG, "wait_ms": MAX_WAIT_MS})
        calls += 1
        got += r.structured_content["chunk"]
        cursor, eof = r.structured_content["cursor"], r.structured_content["eof"]
    exit_code = s.get("exit_code")
    while exit_code is None:
        r = await client.call_tool("process_status", {"process_id": s["process_id"], "wait_ms": MAX_WAIT_MS})
        calls += 1
        exit_code = r.structured_content.get("exit_code")
    assert exit_code == 0, s
    return calls, got


async def peer_command(client, name, argv, ws):
    if name == "cli-mcp-server":
        r = await client.call_tool("run_command", {"command": " ".join(
            a if a.isalnum() else "'" + a + "'" for a in argv)})
        text = text_of(r)
        assert "return code: 0" in text, text
        return 1, text.rsplit("\nCommand completed with return code:", 1)[0]
    r = await client.call_tool("shell_execute", {"command": argv, "directory": ws})
    assert not r.is_error, text_of(r)
    return 1, text_of(r)


COMMANDS = [("true", ["true"], 0), ("python3 -c 'print(1)'", ["python3", "-c", "print(1)"], 2),
            ("seq 1 200000 drained whole", ["seq", "1", "200000"], SEQ_BYTES)]


async def measure(name, argv, env, ws):
    row = {"list": raw_tools_list(argv, env)}
    target = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
    async with Client(target, mode="legacy") as client:
        pings, lists = [], []
        for _ in range(ROUNDS):
            t = time.perf_counter()
            await client.send_ping()
            pings.append(time.perf_counter() - t)
            t = time.perf_counter()
            await client.list_tools(cache_mode="bypass")
            lists.append(time.perf_counter() - t)
        row["ping_ms"] = statistics.median(pings) * 1e3
        row["list_ms"] = statistics.median(lists) * 1e3
        if name in ("codespace", "cli-mcp-server", "mcp-shell-server"):
            for label, cmd, size in COMMANDS:
                times, calls = [], 0
                try:
                    for _ in range(ROUNDS if size < 1000 else 10):
                        t = time.perf_counter()
                        if name == "codespace":
                            calls, out = await codespace_command(client, cmd)
                        else:
                            calls, out = await peer_command(client, name, cmd, ws)
                        times.append(time.perf_counter() - t)
                        # A peer that drops the output's last newline still delivered it.
                        got = len(out.encode())
                        assert got == size or (got == size - 1 and not out.endswith("\n")), f"{got} of {size} bytes arrived"
                except Exception as e:  # a peer's refusal is reported, not fatal
                    row[label] = {"error": f"{type(e).__name__}: {e}"}
                    continue
                row[label] = {"ms": statistics.median(times) * 1e3, "calls": calls}
    return row


async def main():
    binary, config, ws, tools = sys.argv[1:5]
    figures, missing = {}, {}
    for name, (argv, extra) in servers(binary, config, ws, tools).items():
        if not os.path.exists(argv[1] if argv[0] == "node" else argv[0]):
            missing[name] = f"not installed under {tools} (scripts/bench setup installs it)"
            continue
        try:
            figures[name] = await measure(name, argv, env_with(extra), ws)
        except Exception as e:  # a peer that fails is reported, not fatal
            missing[name] = f"{type(e).__name__}: {e}"
    print(json.dumps({"servers": figures, "missing": missing, "seq_bytes": SEQ_BYTES}))


asyncio.run(main())
