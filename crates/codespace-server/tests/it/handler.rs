//! The MCP handler in this process, spoken to as raw JSON-RPC lines over an in-memory pipe:
//! the `tools/list` golden file and honest tool metadata, arguments that do not fit the
//! schema, and the two shapes of a successful result. No binary is started.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use codespace_server::mcp::CodeSpace;
use rmcp::ServiceExt;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf};
use tokio::io::{WriteHalf, split};

use crate::support::{Env, in_process_gateway};

const STRUCTURED_ONLY: &str = "codespace/structuredContentOnly";

/// One session with a handler served in this process.
struct Session {
    write: WriteHalf<DuplexStream>,
    read: Lines<BufReader<ReadHalf<DuplexStream>>>,
}

impl Session {
    /// A handler over `env`'s registry (a ledger in memory), served on a fresh pipe; no
    /// handshake yet.
    fn start(env: &Env) -> Session {
        let store = codespace_store::Store::open_in_memory().unwrap();
        let handler = CodeSpace::new(Arc::new(in_process_gateway(env, store)), Duration::ZERO);
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            if let Ok(service) = handler.serve(theirs).await {
                let _ = service.waiting().await;
            }
        });
        let (read, write) = split(ours);
        Session { write, read: BufReader::new(read).lines() }
    }

    /// A session that declared `capabilities` and completed the handshake, with its
    /// `initialize` answer.
    async fn initialized(env: &Env, capabilities: Value) -> (Session, Value) {
        let mut session = Session::start(env);
        session
            .send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": capabilities,
                "clientInfo": {"name": "raw", "version": "1"}}}))
            .await;
        let init = session.recv().await;
        session.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        (session, init)
    }

    async fn send(&mut self, message: Value) {
        let line = message.to_string() + "\n";
        self.write.write_all(line.as_bytes()).await.unwrap();
    }

    /// The next message that is not a log notification.
    async fn recv(&mut self) -> Value {
        loop {
            let line = self.read.next_line().await.unwrap().expect("the handler answered");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["method"] != "notifications/message" {
                return message;
            }
        }
    }

    /// The `result` of request `id`, `method` with `params`.
    async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        let reply = self.recv().await;
        assert_eq!(reply["id"], id, "{reply}");
        reply
    }

    async fn call(&mut self, id: u64, name: &str, arguments: Value) -> Value {
        let params = json!({"name": name, "arguments": arguments});
        self.request(id, "tools/call", params).await["result"].clone()
    }
}

async fn tools_list() -> Value {
    let mut env = Env::new();
    env.workspace("w", json!({}));
    let (mut session, _) = Session::initialized(&env, json!({})).await;
    session.request(2, "tools/list", json!({})).await["result"].clone()
}

/// Every schema node, with its path.
fn nodes<'a>(v: &'a Value, path: String, out: &mut Vec<(String, &'a Value)>) {
    match v {
        Value::Object(map) => {
            out.push((path.clone(), v));
            for (k, child) in map {
                nodes(child, format!("{path}.{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                nodes(child, format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn tool_metadata_is_honest_and_schemas_are_plain() {
    let list = tools_list().await;
    for tool in list["tools"].as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        let a = &tool["annotations"];
        assert!(tool["title"].as_str().is_some_and(|t| !t.is_empty()), "{name} has a title");
        assert_eq!(a["title"], tool["title"], "{name}");
        // A retry of these starts a second process, writes twice, (without an
        // operation_key) applies again, opens a second work or claims a second instruction.
        let idempotent = !matches!(
            name,
            "exec_command" | "write_stdin" | "apply_patch" | "work_open" | "steer_claim_next"
        );
        // A hint equal to the MCP schema's default is left out (it means the same).
        let hint = |key: &str, default: bool| {
            assert_ne!(a.get(key), Some(&json!(default)), "{name}: {key} states its default");
            a.get(key).map_or(default, |v| v.as_bool().unwrap())
        };
        assert_eq!(hint("idempotentHint", false), idempotent, "{name}");
        let destructive = matches!(
            name,
            "exec_command"
                | "write_stdin"
                | "apply_patch"
                | "terminate_process"
                | "operation_resume"
                | "operation_revert"
        );
        assert_eq!(hint("destructiveHint", true), destructive, "{name}");
        let read_only = matches!(
            name,
            "workspace_info"
                | "read"
                | "find"
                | "operation_status"
                | "read_process"
                | "process_status"
                | "steer_status"
                | "grep"
                | "version"
                | "changes"
        );
        assert_eq!(hint("readOnlyHint", false), read_only, "{name}");
        assert_eq!(a["openWorldHint"], false, "{name}");
        let mut inputs = Vec::new();
        nodes(&tool["inputSchema"], format!("{name}.in"), &mut inputs);
        let mut outputs = Vec::new();
        nodes(&tool["outputSchema"], format!("{name}.out"), &mut outputs);
        for (path, node) in inputs.iter().chain(&outputs) {
            assert!(!node["type"].is_array(), "{path}: type is an array: {node}");
            assert_ne!(node.get("default"), Some(&Value::Null), "{path}: default null");
            for name_only in ["title", "format", "$schema"] {
                let kept = node.get(name_only).is_some_and(|v| !v.is_object());
                assert!(!kept, "{path}: {name_only} is left in: {node}");
            }
        }
        // A model reads every input field's description; an output schema is for checking
        // answers and carries none (the protocol crate's types describe the fields).
        for (path, node) in &inputs {
            if let Some(props) = node.get("properties").and_then(Value::as_object) {
                for (field, schema) in props {
                    let described = schema.get("description").and_then(Value::as_str);
                    assert!(
                        described.is_some_and(|d| !d.is_empty()),
                        "{path}.{field} has no description"
                    );
                }
            }
        }
        for (path, node) in &outputs {
            let prose = node.get("description").is_some_and(Value::is_string);
            assert!(!prose, "{path}: an output schema carries a description: {node}");
        }
    }
    let description = |name: &str| {
        list["tools"].as_array().unwrap().iter().find(|t| t["name"] == name).unwrap()["description"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(description("apply_patch").contains("Idempotent only with an operation_key"));
    let read = &list["tools"][1]["inputSchema"]["properties"]["limit"];
    assert_eq!((&read["minimum"], &read["maximum"]), (&json!(1), &json!(1_048_576)), "{read}");
}

/// What a client puts in its model's context (every tool's description and input schema)
/// stays within 16 KB, and the whole `tools/list` answer within 50 KB: a growing description
/// or schema fails here, not in a client. (The output schemas keep every constraint, about
/// 28 KB of the answer; 40 KB in all would take constraints out of them.)
#[tokio::test]
async fn tools_list_stays_within_its_budgets() {
    let list = tools_list().await;
    let bytes = |v: &Value| serde_json::to_string(v).unwrap().len();
    let tools = list["tools"].as_array().unwrap();
    let context: usize =
        tools.iter().map(|t| bytes(&t["description"]) + bytes(&t["inputSchema"])).sum();
    let output: usize = tools.iter().map(|t| bytes(&t["outputSchema"])).sum();
    let whole = bytes(&list);
    let summary = format!(
        "descriptions and input schemas {context} B, output schemas {output} B, tools/list {whole} B"
    );
    assert!(context <= CONTEXT_BUDGET, "over {CONTEXT_BUDGET} B: {summary}");
    assert!(whole <= LIST_BUDGET, "over {LIST_BUDGET} B: {summary}");
}

/// Bytes of every tool's description and input schema together, as JSON.
const CONTEXT_BUDGET: usize = 16_000;

/// Bytes of the whole `tools/list` result, as JSON.
const LIST_BUDGET: usize = 50_000;

/// `tests/golden/tools_list.json` holds the whole `tools/list` answer: a schema change shows
/// up in review as a change of that file. `CODESPACE_BLESS=1` rewrites it.
#[tokio::test]
async fn tools_list_matches_the_golden_file() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/tools_list.json");
    let now = serde_json::to_string_pretty(&tools_list().await).unwrap() + "\n";
    if std::env::var_os("CODESPACE_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &now).unwrap();
        return;
    }
    let golden = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("{}: {e}; run with CODESPACE_BLESS=1 to create it", path.display())
    });
    assert!(
        golden == now,
        "tools/list differs from {}; review the change, then run with CODESPACE_BLESS=1 to accept it",
        path.display()
    );
}

#[tokio::test]
async fn malformed_arguments_are_tool_errors_naming_the_field() {
    let mut env = Env::new();
    env.workspace("ro", json!({}));
    let (mut session, _) = Session::initialized(&env, json!({})).await;
    // SEP-1303: missing field, wrong type, wrong container: a tool result the model sees,
    // INVALID_ARGUMENTS naming the field; no tool logic has run.
    let cases = [
        ("read", json!({"workspace_id": "ro"}), "path"),
        ("read", json!({"workspace_id": "ro", "path": 7}), "invalid type"),
        ("find", json!({"workspace_id": "ro", "limit": "ten"}), "invalid type"),
        ("version", json!({"workspace_id": "ro", "paths": "a"}), "invalid type"),
        ("read", json!({"workspace_id": "ro", "path": "a", "offset": -1}), "invalid value"),
    ];
    for (id, (tool, args, field)) in (1..).zip(cases) {
        let result = session.call(id, tool, args.clone()).await;
        assert_eq!(result["isError"], true, "{tool} {args}: {result}");
        let body: Value =
            serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(body["code"], "INVALID_ARGUMENTS", "{body}");
        let message = body["message"].as_str().unwrap();
        assert!(message.contains(field), "{tool} {args}: {message} should name {field}");
        assert!(message.contains(tool), "{tool} {args}: {message} should name the tool");
    }
    // An unknown tool stays a protocol error.
    let params = json!({"name": "no_such_tool", "arguments": {}});
    let err = session.request(10, "tools/call", params).await;
    assert_eq!(err["error"]["code"], -32602, "{err}");
    assert!(err["error"]["message"].as_str().unwrap().contains("no_such_tool"), "{err}");
    // The session is still in sync afterwards.
    let info = session.call(11, "workspace_info", json!({})).await;
    assert_eq!(info["structuredContent"]["server"], "codespace", "{info}");
}

/// A session that declares the structured-only capability gets each success once, as
/// `structuredContent` with an empty `content`; refusals keep their text; a session that does
/// not declare it still gets the text copy, from the same handler.
#[tokio::test]
async fn a_session_that_declares_structured_only_gets_each_result_once() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({}));
    let text = "line \"one\"\n\tback\\slash \u{e9}\n";
    std::fs::write(root.join("a.txt"), text).unwrap();
    std::fs::write(root.join("nul.bin"), [0u8; 3]).unwrap();
    let nul = json!({"workspace_id": "w", "path": "nul.bin"});

    let declared = json!({"experimental": {STRUCTURED_ONLY: {}}});
    let (mut session, init) = Session::initialized(&env, declared).await;
    let experimental = &init["result"]["capabilities"]["experimental"];
    assert_eq!(experimental[STRUCTURED_ONLY], json!({}), "{init}");
    let read = session.call(2, "read", json!({"workspace_id": "w", "path": "a.txt"})).await;
    assert_eq!(read["content"], json!([]), "{read}");
    assert_eq!(read["structuredContent"]["content"], text, "{read}");
    assert_ne!(read["isError"], true, "{read}");
    // Bytes that are not text stay in `content`, as base64: they cross once already.
    let bytes = session.call(5, "read", nul.clone()).await;
    assert_eq!(bytes["content"], json!([]), "{bytes}");
    let structured = &bytes["structuredContent"];
    assert_eq!(
        (&structured["encoding"], &structured["content"]),
        (&json!("base64"), &json!("AAAA"))
    );
    let info = session.call(3, "workspace_info", json!({})).await;
    assert_eq!(info["content"], json!([]), "{info}");
    assert_eq!(info["structuredContent"]["server"], "codespace", "{info}");
    // A refusal is still the ErrorBody as text: that is where its code lives.
    let missing = session.call(4, "read", json!({"workspace_id": "w", "path": "nope.txt"})).await;
    assert_eq!(missing["isError"], true, "{missing}");
    let body: Value =
        serde_json::from_str(missing["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(body["code"], "FILE_NOT_FOUND", "{missing}");

    // Without the declaration: the same JSON again as text.
    let other = json!({"experimental": {"something/else": {}}});
    let (mut session, init) = Session::initialized(&env, other).await;
    let experimental = &init["result"]["capabilities"]["experimental"];
    assert_eq!(experimental[STRUCTURED_ONLY], json!({}), "{init}");
    let read = session.call(2, "read", json!({"workspace_id": "w", "path": "a.txt"})).await;
    let copy: Value = serde_json::from_str(read["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(copy, read["structuredContent"], "{read}");
    assert_eq!(copy["content"], text);
    // With the text copy, such bytes move to a resource block's blob, so that they are not
    // carried twice; the text copy still equals structuredContent.
    let bytes = session.call(3, "read", nul).await;
    let copy: Value = serde_json::from_str(bytes["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(copy, bytes["structuredContent"], "{bytes}");
    assert_eq!((&copy["encoding"], &copy["content"]), (&json!("resource"), &json!("")));
    let resource = &bytes["content"][1];
    assert_eq!(resource["type"], "resource", "{bytes}");
    let blob = json!({"uri": "codespace:nul.bin?offset=0&byte_count=3",
        "mimeType": "application/octet-stream", "blob": "AAAA"});
    assert_eq!(resource["resource"], blob, "{bytes}");
}
