//! The two shapes of a successful result: `structuredContent` plus the same JSON as text
//! (the default), and `structuredContent` alone for a session that declared
//! `codespace/structuredContentOnly` at `initialize`.

use serde_json::{Value, json};

use crate::support::{Env, RawStdio};

const STRUCTURED_ONLY: &str = "codespace/structuredContentOnly";

fn initialize_with(raw: &mut RawStdio, capabilities: Value) -> Value {
    raw.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": capabilities,
        "clientInfo": {"name": "raw", "version": "1"}}}));
    let init = raw.recv().expect("initialize answered");
    raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    init
}

fn call(raw: &mut RawStdio, id: u64, name: &str, arguments: Value) -> Value {
    raw.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                     "params": {"name": name, "arguments": arguments}}));
    let reply = raw.recv().expect("tools/call answered");
    assert_eq!(reply["id"], id, "{reply}");
    reply["result"].clone()
}

/// A session that declares the structured-only capability gets each success once, as
/// `structuredContent` with an empty `content`; refusals keep their text; a session that does
/// not declare it still gets the text copy, from the same server build.
#[test]
fn a_session_that_declares_structured_only_gets_each_result_once() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({}));
    let text = "line \"one\"\n\tback\\slash \u{e9}\n";
    std::fs::write(root.join("a.txt"), text).unwrap();

    let mut raw = RawStdio::spawn(&env, &[]);
    let init = initialize_with(&mut raw, json!({"experimental": {STRUCTURED_ONLY: {}}}));
    assert_eq!(
        init["result"]["capabilities"]["experimental"][STRUCTURED_ONLY],
        json!({}),
        "{init}"
    );
    let read = call(&mut raw, 2, "read", json!({"workspace_id": "w", "path": "a.txt"}));
    assert_eq!(read["content"], json!([]), "{read}");
    assert_eq!(read["structuredContent"]["content"], text, "{read}");
    assert_ne!(read["isError"], true, "{read}");
    let info = call(&mut raw, 3, "workspace_info", json!({}));
    assert_eq!(info["content"], json!([]), "{info}");
    assert_eq!(info["structuredContent"]["server"], "codespace", "{info}");
    // A refusal is still the ErrorBody as text: that is where its code lives.
    let missing = call(&mut raw, 4, "read", json!({"workspace_id": "w", "path": "nope.txt"}));
    assert_eq!(missing["isError"], true, "{missing}");
    let body: Value =
        serde_json::from_str(missing["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(body["code"], "FILE_NOT_FOUND", "{missing}");
    drop(raw);

    // Without the declaration: the same JSON again as text.
    let mut raw = RawStdio::spawn(&env, &[]);
    let init = initialize_with(&mut raw, json!({"experimental": {"something/else": {}}}));
    assert_eq!(
        init["result"]["capabilities"]["experimental"][STRUCTURED_ONLY],
        json!({}),
        "{init}"
    );
    let read = call(&mut raw, 2, "read", json!({"workspace_id": "w", "path": "a.txt"}));
    let copy: Value = serde_json::from_str(read["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(copy, read["structuredContent"], "{read}");
    assert_eq!(copy["content"], text);
}
