//! The protocol's edges: every malformed frame is answered (stdio and HTTP) and the
//! connection stays usable; the session lifecycle; log notifications. (Tool metadata and
//! the `tools/list` golden file are checked in process, in `handler.rs`.)

use serde_json::{Value, json};

use crate::support::{Env, RawStdio};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// Sends a ping with `id` and expects its answer next: the connection is still in sync.
fn still_usable(raw: &mut RawStdio, id: u64) {
    raw.send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
    let pong = raw.recv().expect("ping answered");
    assert_eq!((&pong["id"], &pong["result"]), (&json!(id), &json!({})), "{pong}");
}

fn expect_error(raw: &mut RawStdio, code: i64, id: Value, what: &str) {
    let reply = raw.recv().unwrap_or_else(|| panic!("{what}: no answer"));
    assert_eq!(reply["error"]["code"], code, "{what}: {reply}");
    assert_eq!(reply["id"], id, "{what}: {reply}");
}

#[test]
fn stdio_answers_every_malformed_frame() {
    let mut env = Env::new();
    env.workspace("w", json!({}));
    let mut raw = RawStdio::spawn(&env, &[]);
    // Before initialize: a request is -32600, a notification is ignored, ping works.
    raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    raw.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    expect_error(&mut raw, -32600, json!(2), "request before initialize");
    still_usable(&mut raw, 3);
    raw.send_line(INIT);
    assert_eq!(raw.recv().unwrap()["result"]["serverInfo"]["name"], "codespace");
    raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let frames: Vec<(&str, Vec<u8>, i64, Value)> = vec![
        ("invalid JSON", b"{not json".to_vec(), -32700, Value::Null),
        (
            "invalid UTF-8",
            b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"x\":\"\xff\xfe\"}".to_vec(),
            -32700,
            Value::Null,
        ),
        (
            "lone surrogate",
            br#"{"jsonrpc":"2.0","id":6,"method":"ping","params":{"s":"\udc00"}}"#.to_vec(),
            -32700,
            Value::Null,
        ),
        ("batch", br#"[{"jsonrpc":"2.0","id":7,"method":"ping"}]"#.to_vec(), -32600, Value::Null),
        (
            "arguments not an object",
            br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"read","arguments":"x"}}"#
                .to_vec(),
            -32602,
            json!(8),
        ),
        ("second initialize", INIT.as_bytes().to_vec(), -32600, json!(1)),
        ("over-long line", vec![b'x'; 4 * 1024 * 1024 + 16], -32600, Value::Null),
    ];
    for (n, (what, bytes, code, id)) in frames.into_iter().enumerate() {
        raw.send_bytes(&bytes);
        expect_error(&mut raw, code, id, what);
        still_usable(&mut raw, 100 + n as u64);
    }
    // A tool call still works at the end.
    raw.send(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "workspace_info", "arguments": {}}}));
    assert_eq!(raw.recv().unwrap()["result"]["structuredContent"]["server"], "codespace");
    assert!(raw.finish().success());
}

#[test]
fn http_answers_every_malformed_body_with_a_json_rpc_error() {
    let mut env = Env::new();
    env.workspace("w", json!({}));
    let server = env.http(&["--no-auth"]);
    let rpc = |r: &crate::support::RawResponse| -> Value {
        serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("{e}: {r:?}"))
    };
    for (what, body, code) in [
        ("invalid JSON", "{not json", -32700),
        (
            "lone surrogate",
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"\ud800"}}"#,
            -32700,
        ),
        ("batch", r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, -32600),
        ("request before initialize", r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, -32600),
    ] {
        let r = server.post("/mcp", &[], body);
        assert_eq!(r.status, 400, "{what}: {r:?}");
        assert_eq!(r.header("content-type"), Some("application/json"), "{what}");
        assert_eq!(rpc(&r)["error"]["code"], code, "{what}: {r:?}");
    }
    let init = server.post("/mcp", &[], INIT);
    assert_eq!(init.status, 200, "{init:?}");
    let session = format!("mcp-session-id: {}", init.header("mcp-session-id").unwrap());
    let headers = [session.as_str(), "mcp-protocol-version: 2025-06-18"];
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(server.post("/mcp", &headers, note).status, 202);
    let args = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":[1]}}"#;
    let r = server.post("/mcp", &headers, args);
    assert_eq!((r.status, rpc(&r)["error"]["code"].clone()), (400, json!(-32602)), "{r:?}");
    let again = server.post("/mcp", &headers, &INIT.replace("\"id\":1", "\"id\":3"));
    assert!(
        again.body.contains("already initialized") && again.body.contains("-32600"),
        "{again:?}"
    );
    // The session is still usable, and DELETE ends it with 204.
    let ping = server.post("/mcp", &headers, r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#);
    assert!(ping.status == 200 && ping.body.contains(r#""id":4,"result":{}"#), "{ping:?}");
    let delete = server.raw(
        format!(
            "DELETE /mcp HTTP/1.1\r\nHost: {}\r\n{}\r\nmcp-protocol-version: 2025-06-18\r\nConnection: close\r\n\r\n",
            server.addr, session
        )
        .as_bytes(),
    );
    assert!(matches!(delete.status, 200 | 204), "{delete:?}");
}

#[test]
fn warnings_reach_clients_as_log_notifications_at_their_level() {
    let mut env = Env::new();
    env.workspace("w", json!({"profile": "workspace-write"}));
    let db = env.path().join("ledger.sqlite3");
    let flags = ["--operations-db".as_ref(), db.as_os_str()];
    assert!(RawStdio::start(&env, &flags).finish().success());
    // An operation a crash left unfinished: the next start classifies it and warns.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "INSERT INTO operations (operation_id, operation_key, workspace_id, fingerprint, status, created_at) \
         VALUES ('op-00000000-0000-4000-8000-000000000001', 'k', 'w', 'sha256:00', 'pending', 1)",
        [],
    )
    .unwrap();
    drop(conn);
    let mut raw = RawStdio::start(&env, &flags);
    let note = raw.recv_any().expect("a log notification");
    assert_eq!(note["method"], "notifications/message", "{note}");
    assert_eq!(note["params"]["level"], "warning", "{note}");
    assert_eq!(note["params"]["data"]["operation_id"], "op-00000000-0000-4000-8000-000000000001");
    raw.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "logging/setLevel",
        "params": {"level": "error"}}));
    assert_eq!(raw.recv().unwrap()["result"], json!({}));
    assert!(raw.finish().success());
}

/// One session's worth of lines: initialize, a ping and a read of `a.txt`.
fn session_lines() -> String {
    let lines = [
        INIT.to_owned(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}).to_string(),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "read", "arguments": {"workspace_id": "w", "path": "a.txt"}}})
        .to_string(),
    ];
    lines.join("\n") + "\n"
}

/// The answers of [`session_lines`], in any order: initialize, the ping, the read.
fn check_answers(out: &str, how: &str) {
    let answers: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v.get("id").is_some())
        .collect();
    let by_id = |id: u64| answers.iter().find(|v| v["id"] == id).cloned().unwrap_or_default();
    assert_eq!(by_id(1)["result"]["serverInfo"]["name"], "codespace", "{how}: {out}");
    assert_eq!(by_id(2)["result"], json!({}), "{how}: {out}");
    assert_eq!(by_id(3)["result"]["structuredContent"]["content"], "hello\n", "{how}: {out}");
}

/// Stdio works whatever the client made stdin and stdout: pipes and a socket pair are read
/// and written through the poller, a regular file through the blocking pool, and each way
/// answers the same session.
#[test]
fn stdio_answers_over_pipes_a_socket_pair_and_files() {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::os::unix::net::UnixStream;
    use std::process::Stdio;

    let mut env = Env::new();
    let root = env.workspace("w", json!({}));
    std::fs::write(root.join("a.txt"), "hello\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let command = |name: &str| {
        let mut cmd = env.command();
        cmd.args(["serve", "--config"]).arg(env.config()).env("RUST_LOG", "codespace=debug");
        let log = std::fs::File::create(dir.path().join(format!("{name}.log"))).unwrap();
        cmd.stderr(log);
        cmd
    };
    let log = |name: &str| std::fs::read_to_string(dir.path().join(format!("{name}.log"))).unwrap();

    // Pipes.
    let mut child = command("pipe").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(session_lines().as_bytes()).unwrap();
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    assert!(child.wait().unwrap().success());
    check_answers(&out, "pipes");
    let pipe_log = log("pipe");
    assert!(
        pipe_log.contains("stdin is Pipe") && pipe_log.contains("stdout is Pipe"),
        "{pipe_log}"
    );

    // One end of a socket pair as both stdin and stdout.
    let (mut ours, theirs) = UnixStream::pair().unwrap();
    let input = std::os::fd::OwnedFd::from(theirs.try_clone().unwrap());
    let output = std::os::fd::OwnedFd::from(theirs);
    let mut child = command("socket").stdin(input).stdout(output).spawn().unwrap();
    ours.write_all(session_lines().as_bytes()).unwrap();
    let mut reader = BufReader::new(ours.try_clone().unwrap());
    let mut out = String::new();
    for _ in 0..3 {
        reader.read_line(&mut out).unwrap();
    }
    ours.shutdown(std::net::Shutdown::Write).unwrap();
    assert!(child.wait().unwrap().success());
    check_answers(&out, "a socket pair");
    let socket_log = log("socket");
    assert!(
        socket_log.contains("stdin is Socket") && socket_log.contains("stdout is Socket"),
        "{socket_log}"
    );

    // Regular files: the whole session is read, answered, and the server ends at the end.
    std::fs::write(dir.path().join("in.jsonl"), session_lines()).unwrap();
    let input = std::fs::File::open(dir.path().join("in.jsonl")).unwrap();
    let output = std::fs::File::create(dir.path().join("out.jsonl")).unwrap();
    let mut child = command("file").stdin(input).stdout(output).spawn().unwrap();
    assert!(child.wait().unwrap().success());
    check_answers(&std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap(), "files");
    let file_log = log("file");
    assert!(
        file_log.contains("stdin is Other") && file_log.contains("stdout is Other"),
        "{file_log}"
    );
}

/// The poller makes stdin's and stdout's open file descriptions non-blocking; those are
/// shared with whoever started the server, so once it is done they are blocking again
/// (seen here through other descriptors of the same descriptions).
#[test]
fn stdio_puts_back_the_blocking_mode_it_found() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;

    use rustix::fs::{OFlags, fcntl_getfl};

    let mut env = Env::new();
    let root = env.workspace("w", json!({}));
    std::fs::write(root.join("a.txt"), "hello\n").unwrap();
    let (stdin_r, mut stdin_w) = std::io::pipe().unwrap();
    let (stdout_r, stdout_w) = std::io::pipe().unwrap();
    let (stdin_shared, stdout_shared) =
        (stdin_r.try_clone().unwrap(), stdout_w.try_clone().unwrap());
    let mut child = env
        .command()
        .args(["serve", "--config"])
        .arg(env.config())
        .stdin(Stdio::from(stdin_r))
        .stdout(Stdio::from(stdout_w))
        .spawn()
        .unwrap();
    stdin_w.write_all(session_lines().as_bytes()).unwrap();
    let mut reader = BufReader::new(stdout_r);
    let mut out = String::new();
    for _ in 0..3 {
        reader.read_line(&mut out).unwrap();
    }
    check_answers(&out, "pipes shared with the test");
    // While it serves, the descriptions are non-blocking (the poller's).
    assert!(fcntl_getfl(&stdin_shared).unwrap().contains(OFlags::NONBLOCK));
    assert!(fcntl_getfl(&stdout_shared).unwrap().contains(OFlags::NONBLOCK));
    drop(stdin_w);
    assert!(child.wait().unwrap().success());
    assert!(!fcntl_getfl(&stdin_shared).unwrap().contains(OFlags::NONBLOCK), "stdin");
    assert!(!fcntl_getfl(&stdout_shared).unwrap().contains(OFlags::NONBLOCK), "stdout");
}

/// A stdout pipe is widened to 1 MiB (Linux's default ceiling for any process) before
/// the first reply it cannot hold, so a whole `read` window is written without waiting for
/// the client to make room; a session of small replies leaves it as it was.
#[test]
fn stdio_widens_a_stdout_pipe_for_its_first_large_reply() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;

    let mut env = Env::new();
    let root = env.workspace("w", json!({}));
    std::fs::write(root.join("a.txt"), "hello\n").unwrap();
    std::fs::write(root.join("big.txt"), "0123456789abcde\n".repeat(20_000)).unwrap();
    let (stdout_r, stdout_w) = std::io::pipe().unwrap();
    // The kernel's usual default, whatever this machine's is.
    let before = rustix::pipe::fcntl_setpipe_size(&stdout_r, 64 * 1024).unwrap();
    let probe = stdout_r.try_clone().unwrap();
    let mut child = env
        .command()
        .args(["serve", "--config"])
        .arg(env.config())
        .stdin(Stdio::piped())
        .stdout(Stdio::from(stdout_w))
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(session_lines().as_bytes()).unwrap();
    let mut reader = BufReader::new(stdout_r);
    let mut out = String::new();
    for _ in 0..3 {
        reader.read_line(&mut out).unwrap();
    }
    check_answers(&out, "small replies");
    let size = || rustix::pipe::fcntl_getpipe_size(&probe).unwrap();
    assert_eq!(size(), before, "small replies leave the pipe as it was");
    let big = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                     "params": {"name": "read", "arguments": {"workspace_id": "w", "path": "big.txt"}}});
    stdin.write_all(format!("{big}\n").as_bytes()).unwrap();
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let reply: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(reply["result"]["structuredContent"]["byte_count"], 320_000, "{line:.300}");
    let ceiling = std::fs::read_to_string("/proc/sys/fs/pipe-max-size").unwrap();
    assert_eq!(size(), 1 << 20, "fs.pipe-max-size is {}", ceiling.trim());
    drop(stdin);
    assert!(child.wait().unwrap().success());
}
