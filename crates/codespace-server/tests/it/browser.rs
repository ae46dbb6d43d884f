//! The inbox page in a real headless browser (Debian's chromium over its DevTools
//! protocol): load the page, enter the token, queue an instruction, see the agent's claim
//! appear by itself, see a body of markup rendered as inert text, and see control and
//! bidirectional characters written out.

use std::time::Duration;

use serde_json::{Value, json};

use crate::cdp::{Browser, chromium};
use crate::inbox::{PERSON, SERVE, TOKEN, open_work, person};
use crate::support::{Env, call};

/// A JS string literal of `s`.
fn js(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

const XSS: &str = "<img src=x onerror=alert(1)>";

#[tokio::test]
async fn a_person_drives_the_inbox_page_in_a_real_browser() {
    let Some(program) = chromium() else {
        eprintln!("skipped: no chromium (set CODESPACE_REQUIRE_SANDBOX=1 to make this a failure)");
        return;
    };
    let mut env = Env::new();
    env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    let held = env.workspace("c", json!({"profile": "workspace-write", "approvals": "confirm"}));
    let server = env.http(SERVE);
    let agent = server.client(Some(TOKEN)).await;
    let work = open_work(&agent, "w").await;
    let url = format!("http://{}/inbox/", server.addr);

    let browser = Browser::start(&program);
    let mut page = browser.page();
    page.call("Page.enable", json!({}));
    page.call("Runtime.enable", json!({}));
    page.call("Page.navigate", json!({"url": url}));
    page.wait_for(
        "document.getElementById('login') && !document.getElementById('login').hidden",
        Duration::from_secs(15),
    );

    // The MCP token is refused: the page says so and asks again.
    let submit = |token: &str| {
        format!(
            "document.getElementById('token').value = {}; document.getElementById('login').requestSubmit(); true",
            js(token)
        )
    };
    page.eval(&submit(TOKEN));
    page.wait_for(
        "document.getElementById('status').textContent.includes('not the MCP token') && !document.getElementById('login').hidden",
        Duration::from_secs(10),
    );
    // The person token, entered once: kept in session storage, never in the URL.
    page.eval(&submit(PERSON));
    let card = format!("document.querySelector('.work[data-work-id=\"{work}\"]')");
    page.wait_for(&card, Duration::from_secs(10));
    assert_eq!(page.eval("sessionStorage.getItem('codespace-inbox-token')"), json!(PERSON));
    let login = "getComputedStyle(document.getElementById('login')).display";
    assert_eq!(page.eval(login), json!("none"), "the token form goes away");
    assert_eq!(page.eval(&format!("location.href.includes({})", js(PERSON))), json!(false));

    // Queue an instruction from the page.
    let text = "also update the docs";
    page.eval(&format!(
        "(() => {{ const c = {card}; c.querySelector('.compose textarea').value = {};
           c.querySelector('.compose select').value = 'next_checkpoint';
           c.querySelector('.compose button.send').click(); return true; }})()",
        js(text)
    ));
    let queued = format!(
        "[...{card}.querySelectorAll('li.intent')].find(li => li.dataset.state === 'queued' \
         && li.querySelector('.body').textContent === {})",
        js(text)
    );
    page.wait_for(&queued, Duration::from_secs(10));
    let author = format!("({queued}).querySelector('.author').textContent");
    assert_eq!(page.eval(&author), json!("by the person (inbox)"));

    // The agent sees it at its next call and claims it; the page shows the claim by itself.
    let read = call(&agent, "find", json!({"workspace_id": "w", "work_id": work})).await.unwrap();
    assert_eq!(read["coordination"]["claimable_now"], 1, "{read}");
    let claimed = call(&agent, "steer_claim_next", json!({"work_id": work})).await.unwrap();
    assert_eq!(claimed["item"]["content"], text);
    let shown = page.wait_for(
        &format!(
            "[...{card}.querySelectorAll('li.intent')].some(li => li.dataset.state === 'claimed')"
        ),
        Duration::from_secs(3),
    );
    eprintln!("the agent's claim appeared on the page {shown:?} after it was made");
    let id = claimed["item"]["intent_id"].as_str().unwrap().to_owned();
    call(&agent, "steer_complete", json!({"work_id": work, "intent_id": id})).await.unwrap();
    page.wait_for(
        &format!(
            "{card}.querySelector('li.intent[data-intent-id=\"{id}\"]').dataset.state === 'done'"
        ),
        Duration::from_secs(3),
    );

    // Half-written text survives the page's refreshes while the queue changes underneath.
    page.eval(&format!(
        "(() => {{ const a = {card}.querySelector('.compose textarea'); a.value = 'half';
           a.dispatchEvent(new Event('input')); return true; }})()"
    ));
    let (status, _) = person(
        &server,
        "POST",
        &format!("/inbox/works/{work}/intents"),
        Some(json!({"body": "from elsewhere"})),
    );
    assert_eq!(status, 201);
    page.wait_for(
        &format!("[...{card}.querySelectorAll('li.intent .body')].some(b => b.textContent === 'from elsewhere')"),
        Duration::from_secs(5),
    );
    assert_eq!(
        page.eval(&format!("{card}.querySelector('.compose textarea').value")),
        json!("half")
    );

    // A body of markup, written on the page and through the API, stays text.
    page.eval(&format!(
        "(() => {{ const c = {card}; c.querySelector('.compose textarea').value = {};
           c.querySelector('.compose button.send').click(); return true; }})()",
        js(XSS)
    ));
    let (status, _) = person(
        &server,
        "POST",
        &format!("/inbox/works/{work}/intents"),
        Some(json!({"body": XSS, "kind": "note"})),
    );
    assert_eq!(status, 201);
    let both = format!(
        "[...{card}.querySelectorAll('li.intent .body')].filter(b => b.textContent === {}).length === 2",
        js(XSS)
    );
    page.wait_for(&both, Duration::from_secs(10));
    assert_eq!(page.eval("document.querySelectorAll('img').length"), json!(0));
    assert_eq!(page.eval("document.body.innerHTML.includes('<img')"), json!(false));
    let dialogs: Vec<&Value> =
        page.events.iter().filter(|e| e["method"] == "Page.javascriptDialogOpening").collect();
    assert!(dialogs.is_empty(), "a dialog opened: {dialogs:?}");
    // A confirmation hold shows up with its summary; the person grants it on the page.
    let patch = "*** Begin Patch\n*** Add File: granted.txt\n+yes\n*** End Patch\n";
    let required = call(&agent, "apply_patch", json!({"workspace_id": "c", "patch": patch}))
        .await
        .unwrap_err();
    assert_eq!(required["code"], "APPROVAL_REQUIRED");
    let approval = required["approval_id"].as_str().unwrap().to_owned();
    let hold = format!("document.querySelector('.hold[data-approval-id=\"{approval}\"]')");
    page.wait_for(
        &format!("{hold} && {hold}.querySelector('.summary').textContent.includes('granted.txt')"),
        Duration::from_secs(5),
    );
    page.eval(&format!("{hold}.querySelector('button.grant').click(); true"));
    page.wait_for(&format!("!{hold}"), Duration::from_secs(5));
    let resumed = call(&agent, "operation_resume", json!({"approval_id": approval})).await.unwrap();
    assert_eq!(resumed["state"], "consumed", "{resumed}");
    assert_eq!(std::fs::read_to_string(held.join("granted.txt")).unwrap(), "yes\n");

    // A name with a right-to-left override, an agent's title with one and an instruction
    // with one: each is shown written out (`\u{202E}`), never as the mark itself.
    let spoof = "readme\u{202E}txt.hs";
    std::fs::write(held.join(spoof), "top\n").unwrap();
    let update =
        format!("*** Begin Patch\n*** Update File: {spoof}\n@@\n top\n+x\n*** End Patch\n");
    let required = call(&agent, "apply_patch", json!({"workspace_id": "c", "patch": update}))
        .await
        .unwrap_err();
    let approval = required["approval_id"].as_str().unwrap().to_owned();
    let titled =
        call(&agent, "work_open", json!({"workspace_id": "c", "title": "fix\u{202E}gnp.exe"}))
            .await
            .unwrap();
    let titled = titled["work_id"].as_str().unwrap().to_owned();
    let (status, _) = person(
        &server,
        "POST",
        &format!("/inbox/works/{titled}/intents"),
        Some(json!({"body": "line one\nthen \u{2066}isolated\u{2069}"})),
    );
    assert_eq!(status, 201);
    let hold = format!("document.querySelector('.hold[data-approval-id=\"{approval}\"]')");
    let written = format!(
        "{hold} && {hold}.querySelector('.summary').textContent.includes({})",
        js("update readme\\u{202E}txt.hs (+1 -0)")
    );
    page.wait_for(&written, Duration::from_secs(5));
    let other = format!("document.querySelector('.work[data-work-id=\"{titled}\"]')");
    page.wait_for(
        &format!("{other} && {other}.querySelector('li.intent')"),
        Duration::from_secs(5),
    );
    assert_eq!(
        page.eval(&format!("{other}.querySelector('.work-title').textContent")),
        json!("fix\\u{202E}gnp.exe")
    );
    assert_eq!(
        page.eval(&format!("{other}.querySelector('li.intent .body').textContent")),
        json!("line one\nthen \\u{2066}isolated\\u{2069}")
    );
    for mark in ["\u{202E}", "\u{2066}", "\u{2069}"] {
        let shown = page.eval(&format!("document.body.innerText.includes({})", js(mark)));
        assert_eq!(shown, json!(false), "{mark:?} is never shown as itself");
    }

    // The agent gets the text as it was written.
    let (_, intents) = person(&server, "GET", &format!("/inbox/works/{work}/intents"), None);
    let bodies: Vec<&str> =
        intents.as_array().unwrap().iter().filter_map(|i| i["body"].as_str()).collect();
    assert_eq!(bodies.iter().filter(|b| **b == XSS).count(), 2, "{bodies:?}");
}
