"""Sizes and round trips of `tools/list` for MCP servers over stdio, in one run.

Usage: tools_list.py ROUNDS NAME=ARGV_JSON...
Prints one JSON object: per server, the compact JSON bytes of the whole result, of every
tool's description and input schema (what a client puts in its model's context) and of the
output schemas, read off the wire; and the median `tools/list` and `ping` round trips
through the official Python MCP SDK client.
"""

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
import warnings

from mcp import Client, StdioServerParameters


def env():
    keep = ("PATH", "HOME", "XDG_STATE_HOME", "RUST_LOG", "LANG")
    return {k: os.environ[k] for k in keep if k in os.environ}


def compact(value):
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def sizes(argv):
    """`tools/list` over raw stdio lines, as the server wrote it."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env(), text=True)

    def ask(msg):
        proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{argv[0]} closed its stdout")
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
    tools = result["tools"]
    return {
        "tools": len(tools),
        "bytes": compact(result),
        "context_bytes": sum(compact(t.get("description", "")) + compact(t["inputSchema"]) for t in tools),
        "output_bytes": sum(compact(t["outputSchema"]) for t in tools if "outputSchema" in t),
    }


async def round_trips(argv, rounds):
    target = StdioServerParameters(command=argv[0], args=argv[1:], env=env())
    lists, pings = [], []
    async with Client(target, mode="legacy") as client:
        for i in range(rounds + 10):
            t = time.perf_counter()
            await client.send_ping()
            ping = time.perf_counter() - t
            t = time.perf_counter()
            await client.list_tools(cache_mode="bypass")
            listed = time.perf_counter() - t
            if i >= 10:
                lists.append(listed * 1000)
                pings.append(ping * 1000)
    return {"list_ms": statistics.median(lists), "ping_ms": statistics.median(pings)}


def main():
    warnings.simplefilter("ignore")
    rounds = int(sys.argv[1])
    out = {}
    for arg in sys.argv[2:]:
        name, argv = arg.split("=", 1)
        argv = json.loads(argv)
        out[name] = {**sizes(argv), **asyncio.run(round_trips(argv, rounds))}
    print(json.dumps(out))


main()
