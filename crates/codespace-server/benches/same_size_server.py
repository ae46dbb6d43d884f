"""A trivial MCP server over stdio for the binary bench's transfer floor: every tools/call
of its one tool `blob` is answered at once with one text block that makes the reply line
SIZE bytes long (no output schema, so a client only receives and parses it). Its stdout pipe
is widened to 1 MiB, as `codespace` widens its own, so that neither writes in smaller rounds.

Usage: same_size_server.py SIZE
"""

import fcntl
import json
import sys

F_SETPIPE_SZ = 1031


def main():
    size = int(sys.argv[1])
    out = sys.stdout.buffer
    try:
        fcntl.fcntl(out.fileno(), F_SETPIPE_SZ, 1 << 20)
    except OSError:
        pass  # not a pipe, or above this host's limit: written in smaller rounds
    tool = {"name": "blob", "inputSchema": {"type": "object"}}
    for line in sys.stdin.buffer:
        msg = json.loads(line)
        if "id" not in msg or "method" not in msg:
            continue
        method = msg["method"]
        if method == "initialize":
            result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "same-size", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [tool]}
        elif method == "tools/call":
            result = None
        else:
            result = {}
        head = b'{"jsonrpc":"2.0","id":' + json.dumps(msg["id"]).encode() + b',"result":'
        if result is None:
            head += b'{"content":[{"type":"text","text":"'
            tail = b'"}],"isError":false}}\n'
            out.write(head + b"A" * max(0, size - len(head) - len(tail)) + tail)
        else:
            out.write(head + json.dumps(result).encode() + b"}\n")
        out.flush()


main()
