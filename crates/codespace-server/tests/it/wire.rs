//! The 2026-07-28 wire through the real binary over HTTP: a request of the stateless
//! lifecycle (its version, capabilities and client inline in `_meta`) gets results that
//! carry `resultType`, and a tool's `workspace_id` mirrored in the `Mcp-Param-Workspace-Id`
//! routing header (SEP-2243) is checked against the body: a mismatch, a missing header or
//! an undecodable one is -32020 with status 400, and nothing runs.

use serde_json::{Value, json};

use crate::support::{Env, HttpServer, RawResponse};

const REVISION: &str = "2026-07-28";

/// A request of the stateless lifecycle: `params` with the inline `_meta` added.
fn stateless(id: u64, method: &str, mut params: Value) -> String {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": REVISION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// POSTs `body` with the standard headers of `method` (and `name`), plus `extra`.
fn post(
    server: &HttpServer,
    method: &str,
    name: Option<&str>,
    extra: &[&str],
    body: &str,
) -> RawResponse {
    let version = format!("mcp-protocol-version: {REVISION}");
    let method = format!("mcp-method: {method}");
    let name = name.map(|n| format!("mcp-name: {n}"));
    let mut headers = vec![version.as_str(), method.as_str()];
    headers.extend(name.as_deref());
    headers.extend(extra);
    server.post("/mcp", &headers, body)
}

fn rpc(r: &RawResponse) -> Value {
    serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("{e}: {r:?}"))
}

#[test]
fn results_carry_their_result_type_on_the_2026_07_28_wire() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({}));
    std::fs::write(root.join("a.txt"), "hello\n").unwrap();
    let server = env.http(&["--no-auth"]);
    let list = post(&server, "tools/list", None, &[], &stateless(1, "tools/list", json!({})));
    assert_eq!(list.status, 200, "{list:?}");
    assert_eq!(rpc(&list)["result"]["resultType"], "complete", "{list:?}");
    let args = json!({"name": "read", "arguments": {"workspace_id": "w", "path": "a.txt"}});
    let read = post(
        &server,
        "tools/call",
        Some("read"),
        &["mcp-param-workspace-id: w"],
        &stateless(2, "tools/call", args),
    );
    let result = &rpc(&read)["result"];
    assert_eq!(
        (result["resultType"].as_str(), result["structuredContent"]["content"].as_str()),
        (Some("complete"), Some("hello\n")),
        "{read:?}"
    );
    // A refusal is a result too.
    let args = json!({"name": "read", "arguments": {"workspace_id": "w", "path": "../x"}});
    let refused = post(
        &server,
        "tools/call",
        Some("read"),
        &["mcp-param-workspace-id: w"],
        &stateless(3, "tools/call", args),
    );
    let result = &rpc(&refused)["result"];
    assert_eq!(
        (result["resultType"].as_str(), result["isError"].as_bool()),
        (Some("complete"), Some(true)),
        "{refused:?}"
    );
}

#[test]
fn a_routing_header_that_disagrees_with_the_workspace_id_is_refused() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({"profile": "workspace-write"}));
    env.workspace("other", json!({"profile": "workspace-write"}));
    std::fs::write(root.join("a.txt"), "hello\n").unwrap();
    let server = env.http(&["--no-auth"]);
    // tools/list shows which field is mirrored, and in which header.
    let list = rpc(&post(&server, "tools/list", None, &[], &stateless(1, "tools/list", json!({}))));
    let tools = list["result"]["tools"].as_array().unwrap().clone();
    let read = tools.iter().find(|t| t["name"] == "read").unwrap();
    assert_eq!(read["inputSchema"]["properties"]["workspace_id"]["x-mcp-header"], "Workspace-Id");
    let patch = |id: u64| {
        stateless(
            id,
            "tools/call",
            json!({"name": "apply_patch", "arguments": {
            "workspace_id": "w", "patch": "*** Begin Patch\n*** Add File: new.txt\n+x\n*** End Patch\n"}}),
        )
    };
    for (what, header) in [
        ("another workspace", Some("mcp-param-workspace-id: other")),
        ("no header", None),
        ("undecodable Base64", Some("mcp-param-workspace-id: =?base64?dw?=")),
    ] {
        let r = post(
            &server,
            "tools/call",
            Some("apply_patch"),
            &header.into_iter().collect::<Vec<_>>(),
            &patch(2),
        );
        assert_eq!((r.status, &rpc(&r)["error"]["code"]), (400, &json!(-32020)), "{what}: {r:?}");
        assert_eq!(rpc(&r)["id"], 2, "{what}: {r:?}");
        assert!(!root.join("new.txt").exists(), "{what}: the patch ran");
    }
    // The header as the body says (plain or Base64-wrapped) lets the call run.
    let wrapped = "mcp-param-workspace-id: =?base64?dw==?=";
    let r = post(&server, "tools/call", Some("apply_patch"), &[wrapped], &patch(3));
    assert_eq!(rpc(&r)["result"]["isError"], false, "{r:?}");
    assert_eq!(std::fs::read_to_string(root.join("new.txt")).unwrap(), "x\n");
}
