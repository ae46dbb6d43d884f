//! Streamable HTTP through the real binary: the same tools as stdio through a real rmcp
//! client; exposure rules (T3), a token file (T4), bad input on a real socket (B1-B4), 404s.
//! The guards themselves (T1, T2, T4) are checked in process, in `router.rs`.

use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use crate::support::{Env, call};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

fn env_with_file() -> Env {
    let mut env = Env::new();
    let root = env.workspace("ro", json!({}));
    std::fs::write(root.join("a.txt"), "over http").unwrap();
    env
}

#[tokio::test]
async fn tools_over_http_match_stdio() {
    let env = env_with_file();
    let server = env.http(&["--token", "s3cret-token"]);
    let client = server.client(Some("s3cret-token")).await;
    let http_tools = client.list_all_tools().await.unwrap();
    let r = call(&client, "read", json!({"workspace_id": "ro", "path": "a.txt"})).await.unwrap();
    assert_eq!(r["content"], "over http");
    let e = call(&client, "read", json!({"workspace_id": "ro", "path": "../x"})).await.unwrap_err();
    assert_eq!(e["code"], "PATH_ESCAPE");
    client.cancel().await.unwrap();

    let stdio = env.stdio().await;
    let stdio_tools = stdio.list_all_tools().await.unwrap();
    assert_eq!(
        serde_json::to_value(&http_tools).unwrap(),
        serde_json::to_value(&stdio_tools).unwrap()
    );
    stdio.cancel().await.unwrap();
}

#[test]
fn t3_exposure_rules() {
    let env = env_with_file();
    // --no-auth is refused off loopback, and wildcard origins are refused.
    for args in [
        vec!["serve", "--http", "--port", "0", "--no-auth", "--host", "0.0.0.0"],
        vec!["serve", "--http", "--port", "0", "--no-auth", "--allowed-origin", "*"],
        vec!["serve", "--http", "--port", "0", "--no-auth", "--allowed-origin", "null"],
    ] {
        let out = env.command().args(&args).arg("--config").arg(env.config()).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--no-auth") || err.contains("--allowed-origin"), "{err}");
    }
    // Without a token, one is generated into a 0600 file whose path (not the token) is printed.
    let server = env.http(&[]);
    let port = server.addr.rsplit(':').next().unwrap();
    let token_path = env.state().join(format!("codespace/http-token-{port}"));
    let token = std::fs::read_to_string(&token_path).unwrap().trim().to_owned();
    assert_eq!(token.len(), 64);
    assert_eq!(std::fs::metadata(&token_path).unwrap().permissions().mode() & 0o777, 0o600);
    let stderr = server.stderr.join("\n");
    assert!(stderr.contains(&token_path.display().to_string()), "{stderr}");
    assert!(!stderr.contains(&token), "the token never reaches stderr");
    assert!(server.addr.starts_with("127.0.0.1:"), "default bind is loopback");
    let ok = server.post("/mcp", &[&format!("Authorization: Bearer {token}")], INIT);
    assert_eq!(ok.status, 200);
}

/// A `--token-file` works like `--token`, and the token stays out of the logs. (The other
/// token rules are checked in process, in `router.rs`.)
#[test]
fn t4_a_token_file_works_and_stays_out_of_the_logs() {
    let env = env_with_file();
    let token = "correct-horse-battery-staple";
    let file = env.path().join("tok");
    std::fs::write(&file, format!("{token}\n")).unwrap();
    let server = env.http(&["--token-file", file.to_str().unwrap()]);
    assert_eq!(server.post("/mcp", &[&format!("Authorization: Bearer {token}")], INIT).status, 200);
    assert_eq!(server.post("/mcp", &[], INIT).status, 401);
    assert!(!server.stderr.join("\n").contains(token));
}

#[test]
fn b1_b4_bad_input_is_refused_and_the_server_survives() {
    let env = env_with_file();
    let server = env.http(&["--no-auth"]);
    // B1: declared too large, and chunked too large.
    let big = server.raw(
        format!("POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\nConnection: close\r\n\r\n{{", server.addr).as_bytes(),
    );
    assert_eq!(big.status, 413, "{big:?}");
    let mut chunked = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        server.addr
    )
    .into_bytes();
    let chunk = vec![b' '; 1 << 20];
    for _ in 0..5 {
        chunked.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        chunked.extend_from_slice(&chunk);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let r = server.raw(&chunked);
    assert_eq!(r.status, 413, "{:?}", (r.status, &r.body));
    // B2: deep nesting is refused without a crash.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let r = server.post("/mcp", &[], &deep);
    assert!((400..500).contains(&r.status), "{:?}", (r.status, &r.body[..r.body.len().min(200)]));
    // B3: invalid JSON, a batch, a wrong jsonrpc version.
    for body in [
        "{not json",
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
        r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
    ] {
        let r = server.post("/mcp", &[], body);
        assert!((400..500).contains(&r.status) || r.body.contains("error"), "{body}: {r:?}");
    }
    // B4: a call without a session, and an unsupported protocol version header.
    let call_body = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"workspace_id":"ro","path":"a.txt"}}}"#;
    let r = server.post("/mcp", &[], call_body);
    assert!((400..500).contains(&r.status), "{r:?}");
    assert!(!r.body.contains("over http"));
    let r = server.post("/mcp", &["MCP-Protocol-Version: 1999-01-01"], INIT);
    assert!((400..500).contains(&r.status) || r.body.contains("error"), "{r:?}");
    // Other paths are 404 (beneath /inbox the person's token comes first, even under
    // --no-auth); the server still answers afterwards.
    for path in ["/", "/mcp/extra", "/.well-known/oauth-authorization-server"] {
        let r = server.post(path, &[], INIT);
        assert_eq!(r.status, 404, "{path}");
    }
    assert_eq!(server.post("/inbox/unknown", &[], INIT).status, 401);
    assert_eq!(server.post("/mcp", &[], INIT).status, 200);
}

#[test]
fn generated_tokens_are_per_port_and_written_after_the_bind() {
    let env = env_with_file();
    let first = env.http(&[]);
    let port = first.addr.rsplit(':').next().unwrap().to_owned();
    let first_path = env.state().join(format!("codespace/http-token-{port}"));
    let first_token = std::fs::read_to_string(&first_path).unwrap();

    // A second server on the same port fails to bind and writes no token over the first's.
    let out = env
        .command()
        .args(["serve", "--http", "--port", &port, "--config"])
        .arg(env.config())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0), "a second bind on port {port} cannot succeed");
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot bind"));
    assert_eq!(std::fs::read_to_string(&first_path).unwrap(), first_token);
    let auth = format!("Authorization: Bearer {}", first_token.trim());
    assert_eq!(
        first.post("/mcp", &[&auth], INIT).status,
        200,
        "the first server's clients still work"
    );

    // A second server on another port has a token and a file of its own.
    let second = env.http(&[]);
    let second_port = second.addr.rsplit(':').next().unwrap();
    let second_path = env.state().join(format!("codespace/http-token-{second_port}"));
    let second_token = std::fs::read_to_string(&second_path).unwrap();
    assert_ne!(second_token, first_token);
    assert_eq!(std::fs::read_to_string(&first_path).unwrap(), first_token);
    let auth = format!("Authorization: Bearer {}", second_token.trim());
    assert_eq!(second.post("/mcp", &[&auth], INIT).status, 200);
}

/// A request whose whole answer is one response is answered `application/json`, session
/// header and all; the same call through a real client still works, and a 1 MiB window
/// arrives as one plain JSON body.
#[test]
fn a_single_response_is_plain_json() {
    let mut env = Env::new();
    let root = env.workspace("ro", json!({}));
    std::fs::write(root.join("big.txt"), "x".repeat(1 << 20)).unwrap();
    let server = env.http(&["--no-auth"]);
    let init = server.post("/mcp", &[], INIT);
    assert_eq!(init.status, 200, "{init:?}");
    assert_eq!(init.header("content-type"), Some("application/json"), "{init:?}");
    let v: serde_json::Value = serde_json::from_str(&init.body).unwrap();
    assert_eq!(v["result"]["serverInfo"]["name"], "codespace");
    let session = init.header("mcp-session-id").expect("a session").to_owned();
    let session_header = format!("Mcp-Session-Id: {session}");
    let version = "MCP-Protocol-Version: 2025-06-18";
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    server.post("/mcp", &[&session_header, version], initialized);
    let read = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"workspace_id":"ro","path":"big.txt"}}}"#;
    let reply = server.post("/mcp", &[&session_header, version], read);
    assert_eq!(reply.header("content-type"), Some("application/json"), "{:?}", reply.headers);
    let v: serde_json::Value = serde_json::from_str(&reply.body).unwrap();
    assert_eq!(v["id"], 2);
    assert_eq!(v["result"]["structuredContent"]["byte_count"], 1 << 20);
}

/// The structured-only shape is per session: over one HTTP server, the session that
/// declared it gets `structuredContent` alone, the one that did not gets the text copy too.
#[test]
fn structured_only_is_chosen_per_session() {
    let mut env = Env::new();
    let root = env.workspace("ro", json!({}));
    std::fs::write(root.join("a.txt"), "a \"quoted\"\nline\n").unwrap();
    let server = env.http(&["--no-auth"]);
    let version = "MCP-Protocol-Version: 2025-06-18";
    let open = |capabilities: &str| {
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{capabilities},"clientInfo":{{"name":"raw","version":"1"}}}}}}"#
        );
        let reply = server.post("/mcp", &[], &init);
        assert_eq!(reply.status, 200, "{reply:?}");
        let session = format!("Mcp-Session-Id: {}", reply.header("mcp-session-id").unwrap());
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        server.post("/mcp", &[&session, version], initialized);
        session
    };
    let once = open(r#"{"experimental":{"codespace/structuredContentOnly":{}}}"#);
    let both = open("{}");
    let read = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"workspace_id":"ro","path":"a.txt"}}}"#;
    for (session, copies) in [(&once, 0), (&both, 1), (&once, 0)] {
        let reply = server.post("/mcp", &[session, version], read);
        let v: serde_json::Value = serde_json::from_str(&reply.body).unwrap();
        let result = &v["result"];
        assert_eq!(result["structuredContent"]["content"], "a \"quoted\"\nline\n", "{v}");
        assert_eq!(result["content"].as_array().map(Vec::len), Some(copies), "{v}");
    }
}
