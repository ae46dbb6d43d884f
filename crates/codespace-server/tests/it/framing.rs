//! Every frame gets the JSON-RPC answer the spec names, through the real binary: on stdio
//! before and after `initialize` (a batch, a message that is not an object, an id that
//! cannot be a request's), a standard method whose params do not fit, an unknown method
//! named in its error; over HTTP the same whatever the session's state.

use serde_json::{Value, json};

use crate::support::{Env, HttpServer, RawResponse, RawStdio};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// Frames of the wrong shape: each is -32600 with id `null`, before and after `initialize`.
const MISSHAPEN: [(&str, &str); 9] = [
    ("batch", r#"[{"jsonrpc":"2.0","id":7,"method":"ping"}]"#),
    ("empty batch", "[]"),
    ("string", r#""ping""#),
    ("number", "42"),
    ("null", "null"),
    ("object id", r#"{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}"#),
    ("null id", r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
    ("fractional id", r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#),
    ("array id", r#"{"jsonrpc":"2.0","id":[1],"method":"tools/list"}"#),
];

/// Sends `frame` and expects `code` with `id` next, then a ping answered: still in sync.
fn answered(raw: &mut RawStdio, frame: &str, code: i64, id: &Value, what: &str, ping: u64) {
    raw.send_line(frame);
    let reply = raw.recv().unwrap_or_else(|| panic!("{what}: no answer"));
    assert_eq!((&reply["error"]["code"], &reply["id"]), (&json!(code), id), "{what}: {reply}");
    raw.send(&json!({"jsonrpc": "2.0", "id": ping, "method": "ping"}));
    let pong = raw.recv().expect("ping answered");
    assert_eq!((&pong["id"], &pong["result"]), (&json!(ping), &json!({})), "after {what}: {pong}");
}

#[test]
fn stdio_answers_every_misshapen_frame_before_and_after_initialize() {
    let mut env = Env::new();
    env.workspace("w", json!({}));
    let mut raw = RawStdio::spawn(&env, &[]);
    for (n, (what, frame)) in MISSHAPEN.iter().enumerate() {
        let what = format!("{what} before initialize");
        answered(&mut raw, frame, -32600, &Value::Null, &what, 100 + n as u64);
    }
    // A well-formed request before initialize is -32600 with its own id.
    let early = r#"{"jsonrpc":"2.0","id":"early","method":"tools/list"}"#;
    answered(&mut raw, early, -32600, &json!("early"), "tools/list before initialize", 99);
    raw.send_line(INIT);
    assert_eq!(raw.recv().unwrap()["result"]["serverInfo"]["name"], "codespace");
    raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    for (n, (what, frame)) in MISSHAPEN.iter().enumerate() {
        let what = format!("{what} after initialize");
        answered(&mut raw, frame, -32600, &Value::Null, &what, 200 + n as u64);
    }
    // A response the server cannot have asked for is never answered.
    raw.send_line(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#);
    let params = [
        (
            "tools/call without name",
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{}}}"#,
        ),
        (
            "tools/call with a numeric name",
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":7}}"#,
        ),
        (
            "logging/setLevel without level",
            r#"{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{}}"#,
        ),
    ];
    for (n, (what, frame)) in params.into_iter().enumerate() {
        answered(&mut raw, frame, -32602, &json!(3), what, 300 + n as u64);
    }
    raw.send_line(r#"{"jsonrpc":"2.0","id":"m","method":"no/such/method"}"#);
    let reply = raw.recv().unwrap();
    assert_eq!(reply["error"]["code"], -32601, "{reply}");
    assert_eq!(reply["error"]["message"], "Method not found: no/such/method", "{reply}");
    assert!(raw.finish().success());
}

const INIT_2025_03_26: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

fn rpc(r: &RawResponse) -> Value {
    serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("not a JSON-RPC body ({e}): {r:?}"))
}

/// Opens a session with `init`; its id header line, and the protocol version one.
fn open(server: &HttpServer, init: &str, version: &str) -> [String; 2] {
    let r = server.post("/mcp", &[], init);
    assert_eq!(r.status, 200, "{r:?}");
    let session = format!("mcp-session-id: {}", r.header("mcp-session-id").unwrap());
    let version = format!("mcp-protocol-version: {version}");
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(server.post("/mcp", &[&session, &version], note).status, 202);
    [session, version]
}

#[test]
fn http_answers_a_missing_or_unknown_session_with_a_json_rpc_error_whatever_the_method() {
    let mut env = Env::new();
    env.workspace("w", json!({}));
    let server = env.http(&["--no-auth"]);
    let unknown = "mcp-session-id: 3b4ad2d3-0000-4000-8000-000000000000";
    let request = r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#;
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let reply = r#"{"jsonrpc":"2.0","id":9,"result":{}}"#;
    for (what, headers, body, status, id) in [
        ("request, no session", &[][..], request, 400, json!(5)),
        ("notification, no session", &[], note, 400, Value::Null),
        ("response, no session", &[], reply, 400, json!(9)),
        ("request, unknown session", &[unknown], request, 404, json!(5)),
        ("initialize, unknown session", &[unknown], INIT, 404, json!(1)),
        ("notification, unknown session", &[unknown], note, 404, Value::Null),
    ] {
        let r = server.post("/mcp", headers, body);
        assert_eq!(r.status, status, "{what}: {r:?}");
        assert_eq!(r.header("content-type"), Some("application/json"), "{what}");
        assert_eq!(
            (&rpc(&r)["error"]["code"], &rpc(&r)["id"]),
            (&json!(-32600), &id),
            "{what}: {r:?}"
        );
    }
    for (what, method, headers, status) in [
        ("GET, no session", "GET", "", 400),
        ("GET, unknown session", "GET", &format!("{unknown}\r\n"), 404),
        ("DELETE, no session", "DELETE", "", 400),
        ("DELETE, unknown session", "DELETE", &format!("{unknown}\r\n"), 404),
    ] {
        let r = server.raw(
            format!(
                "{method} /mcp HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n{headers}Connection: close\r\n\r\n",
                server.addr
            )
            .as_bytes(),
        );
        assert_eq!(r.status, status, "{what}: {r:?}");
        assert_eq!(rpc(&r)["error"]["code"], -32600, "{what}: {r:?}");
    }
}

#[test]
fn http_refuses_a_second_initialize_like_any_protocol_error() {
    let mut env = Env::new();
    env.workspace("w", json!({}));
    let server = env.http(&["--no-auth"]);
    let [session, version] = open(&server, INIT, "2025-11-25");
    let headers = [session.as_str(), version.as_str()];
    let again = server.post("/mcp", &headers, &INIT.replace("\"id\":1", "\"id\":2"));
    let bad_args = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":[1]}}"#;
    let other = server.post("/mcp", &headers, bad_args);
    assert_eq!((again.status, other.status), (400, 400), "{again:?} {other:?}");
    assert_eq!((&rpc(&again)["error"]["code"], &rpc(&again)["id"]), (&json!(-32600), &json!(2)));
    // The session is still open.
    let ping = server.post("/mcp", &headers, r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#);
    assert_eq!(rpc(&ping)["result"], json!({}), "{ping:?}");
}

#[test]
fn http_takes_a_batch_only_on_a_session_that_negotiated_2025_03_26() {
    let mut env = Env::new();
    env.workspace("w", json!({}));
    let server = env.http(&["--no-auth"]);
    let batch = r#"[{"jsonrpc":"2.0","id":"a","method":"ping"},
        {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"gone"}},
        {"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"workspace_info","arguments":{}}},
        {"jsonrpc":"2.0","id":1.5,"method":"ping"}]"#;
    let [session, version] = open(&server, INIT_2025_03_26, "2025-03-26");
    let r = server.post("/mcp", &[&session, &version], batch);
    assert_eq!(r.status, 200, "{r:?}");
    let replies = rpc(&r);
    let replies = replies.as_array().unwrap_or_else(|| panic!("not an array: {r:?}"));
    assert_eq!(replies.len(), 3, "{r:?}");
    assert_eq!(replies[0], json!({"jsonrpc": "2.0", "id": "a", "result": {}}));
    assert_eq!(replies[1]["result"]["structuredContent"]["server"], "codespace", "{r:?}");
    assert_eq!((&replies[2]["error"]["code"], &replies[2]["id"]), (&json!(-32600), &Value::Null));
    // Only notifications: accepted, nothing to answer.
    let notes =
        r#"[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x"}}]"#;
    assert_eq!(server.post("/mcp", &[&session, &version], notes).status, 202);
    // A later revision removed batches.
    for revision in ["2025-06-18", "2025-11-25"] {
        let init = INIT.replace("2025-11-25", revision);
        let [session, version] = open(&server, &init, revision);
        let r = server.post("/mcp", &[&session, &version], batch);
        assert_eq!(
            (r.status, &rpc(&r)["error"]["code"]),
            (400, &json!(-32600)),
            "{revision}: {r:?}"
        );
    }
}
