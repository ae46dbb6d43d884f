//! Works and the person's instruction queue end to end: the agent over MCP (stdio and
//! HTTP), the person over HTTP `/inbox`: draft → queue → claim → complete → finish, the
//! status mapping and guards, holds decided by the person; the helpers the other inbox
//! tests share. (Concurrency, restarts, the hint and stop are in `inbox_queue.rs`.)

use serde_json::{Value, json};

use crate::support::{Client, Env, HttpServer, RawResponse, call, raw_http, refused};

pub(crate) const TOKEN: &str = "inbox-test-token";

/// The person's token for `/inbox`; the MCP token `TOKEN` is refused there.
pub(crate) const PERSON: &str = "inbox-person-token";

/// The flags of a server with both tokens.
pub(crate) const SERVE: &[&str] = &["--token", TOKEN, "--person-token", PERSON];

/// One `/inbox` request with the token (when given), an optional Origin and JSON body.
pub(crate) fn request(
    server: &HttpServer,
    method: &str,
    path: &str,
    token: Option<&str>,
    origin: Option<&str>,
    body: Option<&Value>,
) -> RawResponse {
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        server.addr,
        body.len()
    );
    if !body.is_empty() {
        req.push_str("Content-Type: application/json\r\n");
    }
    if let Some(t) = token {
        req.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    if let Some(o) = origin {
        req.push_str(&format!("Origin: {o}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(&body);
    raw_http(&server.addr, req.as_bytes())
}

/// A person's call: `(status, JSON body)`.
pub(crate) fn person(
    server: &HttpServer,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let r = request(server, method, path, Some(PERSON), None, body.as_ref());
    let value = serde_json::from_str(&r.body)
        .unwrap_or_else(|e| panic!("{method} {path}: {} not JSON ({e}): {:?}", r.status, r.body));
    (r.status, value)
}

/// Writes and queues an instruction; returns it as queued.
pub(crate) fn queue(server: &HttpServer, work_id: &str, body: &str, delivery: &str) -> Value {
    let (status, draft) = person(
        server,
        "POST",
        &format!("/inbox/works/{work_id}/intents"),
        Some(json!({"body": body, "delivery": delivery})),
    );
    assert_eq!(status, 201, "{draft}");
    assert_eq!(draft["state"], "draft");
    let id = draft["intent_id"].as_str().unwrap();
    let (status, queued) = person(
        server,
        "POST",
        &format!("/inbox/intents/{id}/queue"),
        Some(json!({"revision": draft["revision"]})),
    );
    assert_eq!(status, 200, "{queued}");
    assert_eq!(queued["state"], "queued");
    queued
}

pub(crate) async fn open_work(client: &Client, ws: &str) -> String {
    let r = call(client, "work_open", json!({"workspace_id": ws, "title": "a job"})).await.unwrap();
    assert_eq!(r["state"], "active");
    assert_eq!(r["workspace_id"], ws);
    let id = r["work_id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("work-"), "{id}");
    id
}

pub(crate) fn http_env() -> Env {
    let mut env = Env::new();
    env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    env.workspace("v", json!({"profile": "workspace-write", "sandbox": "off"}));
    env
}

/// The reference's `inbox.rs` topic: draft → queue → claim → complete → finish.
#[tokio::test]
async fn draft_queue_claim_complete_finish() {
    let env = http_env();
    let server = env.http(SERVE);
    let agent = server.client(Some(TOKEN)).await;
    let work = open_work(&agent, "w").await;
    let (status, works) = person(&server, "GET", "/inbox/works?workspace_id=w", None);
    assert_eq!(status, 200);
    assert_eq!(works[0]["work_id"], work.as_str());
    assert_eq!(works[0]["title"], "a job");

    let (status, draft) = person(
        &server,
        "POST",
        &format!("/inbox/works/{work}/intents"),
        Some(json!({"body": "also update the docs", "delivery": "next_checkpoint"})),
    );
    assert_eq!(status, 201);
    assert!(draft["intent_id"].as_str().unwrap().starts_with("fb-"));
    assert_eq!((draft["kind"].as_str(), draft["revision"].as_u64()), (Some("follow_up"), Some(1)));
    // A draft is invisible to the agent.
    let none = call(&agent, "steer_claim_next", json!({"work_id": work})).await.unwrap();
    assert!(none.get("item").is_none(), "{none}");
    let id = draft["intent_id"].as_str().unwrap();
    let (status, queued) = person(
        &server,
        "POST",
        &format!("/inbox/intents/{id}/queue"),
        Some(json!({"revision": 1})),
    );
    assert_eq!((status, queued["state"].as_str()), (200, Some("queued")));
    let st = call(&agent, "steer_status", json!({"work_id": work})).await.unwrap();
    assert_eq!((st["queued"].as_u64(), st["claimable_now"].as_u64()), (Some(1), Some(1)));
    assert!(st.get("body").is_none() && !st.to_string().contains("docs"), "{st}");

    let claimed = call(&agent, "steer_claim_next", json!({"work_id": work})).await.unwrap();
    let item = &claimed["item"];
    assert_eq!(item["intent_id"], id);
    assert_eq!(item["content"], "also update the docs");
    assert_eq!(item["delivery"], "next_checkpoint");
    let (_, intents) = person(&server, "GET", &format!("/inbox/works/{work}/intents"), None);
    assert_eq!(intents[0]["state"], "claimed");
    let done =
        call(&agent, "steer_complete", json!({"work_id": work, "intent_id": id})).await.unwrap();
    assert_eq!(done["state"], "done");
    let finished = call(&agent, "work_finish", json!({"work_id": work})).await.unwrap();
    assert_eq!(finished["closed"], true, "{finished}");
    assert_eq!(finished["state"], "closed");
    let (_, shown) = person(&server, "GET", &format!("/inbox/works/{work}"), None);
    assert_eq!(shown["state"], "closed");
    refused(&agent, "steer_claim_next", json!({"work_id": work}), "WORK_CLOSED").await;
    refused(&agent, "work_open", json!({"workspace_id": "nope"}), "WORKSPACE_NOT_FOUND").await;
}

/// §5.4's status mapping with `ErrorBody` bodies, and the guards: 401 without the token,
/// 403 for a foreign Origin (token or not), the page itself without the token.
#[tokio::test]
async fn inbox_status_mapping_and_guards() {
    let env = http_env();
    let server = env.http(SERVE);
    let agent = server.client(Some(TOKEN)).await;
    let work = open_work(&agent, "w").await;

    let anonymous = request(&server, "GET", "/inbox/works", None, None, None);
    assert_eq!(anonymous.status, 401);
    assert_eq!(anonymous.header("www-authenticate"), Some("Bearer"));
    let wrong = request(&server, "GET", "/inbox/works", Some("nope"), None, None);
    assert_eq!(wrong.status, 401);
    let post = json!({"body": "x"});
    let path = format!("/inbox/works/{work}/intents");
    let anonymous = request(&server, "POST", &path, None, None, Some(&post));
    assert_eq!(anonymous.status, 401);
    for token in [Some(PERSON), None] {
        let foreign =
            request(&server, "POST", &path, token, Some("https://evil.example"), Some(&post));
        assert_eq!(foreign.status, 403, "{foreign:?}");
    }
    let same = format!("http://{}", server.addr);
    let ok = request(&server, "GET", "/inbox/works", Some(PERSON), Some(&same), None);
    assert_eq!(ok.status, 200, "{ok:?}");
    // Nothing was written by the refused requests.
    let (_, intents) = person(&server, "GET", &path, None);
    assert_eq!(intents, json!([]));

    // The page and its files need no token and carry no secret; the policy forbids
    // inline script.
    let page = request(&server, "GET", "/inbox/", None, None, None);
    assert_eq!(page.status, 200);
    assert!(page.header("content-type").unwrap().starts_with("text/html"));
    let csp = page.header("content-security-policy").unwrap();
    assert!(csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"), "{csp}");
    assert!(page.body.contains("/inbox/inbox.js") && !page.body.contains("<script>"));
    assert!(!page.body.contains(TOKEN) && !page.body.contains(PERSON));
    for asset in ["/inbox/inbox.js", "/inbox/inbox.css"] {
        let r = request(&server, "GET", asset, None, None, None);
        assert_eq!(r.status, 200, "{asset}");
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    }
    let foreign_page = request(&server, "GET", "/inbox/", None, Some("https://evil.example"), None);
    assert_eq!(foreign_page.status, 403);
    assert_eq!(request(&server, "GET", "/inbox/nothing", Some(PERSON), None, None).status, 404);

    let expect = |(status, body): (u16, Value), want: u16, code: &str| {
        assert_eq!(status, want, "{body}");
        assert_eq!(body["code"], code, "{body}");
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
    };
    expect(person(&server, "GET", "/inbox/works/work-nope", None), 404, "WORK_NOT_FOUND");
    expect(person(&server, "GET", "/inbox/works/work-nope/intents", None), 404, "WORK_NOT_FOUND");
    expect(person(&server, "POST", "/inbox/intents/fb-nope/cancel", None), 404, "INTENT_NOT_FOUND");
    expect(
        person(&server, "GET", "/inbox/works?workspace_id=nope", None),
        400,
        "WORKSPACE_NOT_FOUND",
    );
    expect(person(&server, "POST", &path, Some(json!({"body": "  "}))), 400, "INVALID_ARGUMENTS");
    expect(
        person(&server, "POST", &path, Some(json!({"body": "x", "delivery": "soon"}))),
        400,
        "INVALID_ARGUMENTS",
    );
    let big = "x".repeat(64 * 1024 + 1);
    expect(person(&server, "POST", &path, Some(json!({"body": big}))), 400, "INVALID_ARGUMENTS");

    // Revision conflicts on edit and queue; a claimed instruction is frozen (409); an
    // ended one is not editable (400).
    let (_, draft) = person(&server, "POST", &path, Some(json!({"body": "one"})));
    let id = draft["intent_id"].as_str().unwrap().to_owned();
    let edit = |revision: u64, body: &str| {
        person(
            &server,
            "PATCH",
            &format!("/inbox/intents/{id}"),
            Some(json!({"revision": revision, "body": body, "delivery": "next_checkpoint"})),
        )
    };
    let (status, edited) = edit(1, "two");
    assert_eq!((status, edited["revision"].as_u64()), (200, Some(2)), "{edited}");
    assert_eq!(edited["body"], "two");
    expect(edit(1, "stale"), 409, "INTENT_REVISION_CONFLICT");
    let queue_path = format!("/inbox/intents/{id}/queue");
    expect(
        person(&server, "POST", &queue_path, Some(json!({"revision": 1}))),
        409,
        "INTENT_REVISION_CONFLICT",
    );
    let (status, _) = person(&server, "POST", &queue_path, Some(json!({"revision": 2})));
    assert_eq!(status, 200);
    call(&agent, "steer_claim_next", json!({"work_id": work})).await.unwrap();
    expect(edit(4, "late"), 409, "INTENT_ALREADY_CLAIMED");
    expect(
        person(&server, "POST", &format!("/inbox/intents/{id}/cancel"), None),
        409,
        "INTENT_ALREADY_CLAIMED",
    );
    call(&agent, "steer_complete", json!({"work_id": work, "intent_id": id, "outcome": "blocked"}))
        .await
        .unwrap();
    expect(edit(5, "after"), 400, "INTENT_NOT_EDITABLE");
    let (_, intents) = person(&server, "GET", &path, None);
    assert_eq!(intents[0]["state"], "blocked");
    assert_eq!(intents[0]["body"], "two", "claimed content stays frozen");
}

/// Pending confirmation holds are listed for the person, who grants or denies them over the
/// same guarded API.
#[tokio::test]
async fn holds_are_listed_and_decided_over_inbox() {
    let mut env = Env::new();
    env.workspace("c", json!({"profile": "workspace-write", "approvals": "confirm"}));
    let server = env.http(SERVE);
    let agent = server.client(Some(TOKEN)).await;
    let (status, none) = person(&server, "GET", "/inbox/holds", None);
    assert_eq!((status, none), (200, json!([])));
    let mut ids = Vec::new();
    for name in ["one.txt", "two.txt"] {
        let patch = format!("*** Begin Patch\n*** Add File: {name}\n+x\n*** End Patch\n");
        let e = call(&agent, "apply_patch", json!({"workspace_id": "c", "patch": patch}))
            .await
            .unwrap_err();
        assert_eq!(e["code"], "APPROVAL_REQUIRED");
        ids.push(e["approval_id"].as_str().unwrap().to_owned());
    }
    let (_, listed) = person(&server, "GET", "/inbox/holds", None);
    let listed: Vec<&str> =
        listed.as_array().unwrap().iter().map(|h| h["approval_id"].as_str().unwrap()).collect();
    assert_eq!(listed.len(), 2);
    assert!(ids.iter().all(|id| listed.contains(&id.as_str())), "{listed:?}");
    assert_eq!(request(&server, "GET", "/inbox/holds", None, None, None).status, 401);
    let grant = format!("/inbox/holds/{}/grant", ids[0]);
    let foreign =
        request(&server, "POST", &grant, Some(PERSON), Some("https://evil.example"), None);
    assert_eq!(foreign.status, 403);
    let (status, granted) = person(&server, "POST", &grant, None);
    assert_eq!((status, granted["state"].as_str()), (200, Some("granted")), "{granted}");
    let (status, again) = person(&server, "POST", &grant, None);
    assert_eq!((status, again["code"].as_str()), (409, Some("APPROVAL_CONFLICT")), "{again}");
    let (status, denied) = person(&server, "POST", &format!("/inbox/holds/{}/deny", ids[1]), None);
    assert_eq!((status, denied["state"].as_str()), (200, Some("denied")), "{denied}");
    let (status, missing) = person(&server, "POST", "/inbox/holds/appr-nope/grant", None);
    assert_eq!((status, missing["code"].as_str()), (404, Some("APPROVAL_NOT_FOUND")));
    let (_, left) = person(&server, "GET", "/inbox/holds", None);
    assert_eq!(left, json!([]));
    let resumed = call(&agent, "operation_resume", json!({"approval_id": ids[0]})).await.unwrap();
    assert_eq!(resumed["state"], "consumed");
}
