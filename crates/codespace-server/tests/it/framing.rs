//! Every frame gets the JSON-RPC answer the spec names, through the real binary: on stdio
//! before and after `initialize` (a batch, a message that is not an object, an id that
//! cannot be a request's), a standard method whose params do not fit, an unknown method
//! named in its error; over HTTP the same whatever the session's state.

use serde_json::{Value, json};

use crate::support::{Env, RawStdio};

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
