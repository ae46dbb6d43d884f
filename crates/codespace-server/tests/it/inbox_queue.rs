//! The person's queue under load and over time, end to end: 20 concurrent claimers,
//! durability across a restart, instructions carried to the next work, the coordination
//! hint, and stop.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::inbox::{SERVE, TOKEN, http_env, open_work, person, queue};
use crate::process::{alive, wait_output};
use crate::support::{call, refused};

/// 20 agents claim from one queue at once: each instruction is claimed exactly once.
#[tokio::test]
async fn twenty_concurrent_claimers_take_each_instruction_once() {
    const ITEMS: usize = 60;
    let env = http_env();
    let server = env.http(SERVE);
    let first = server.client(Some(TOKEN)).await;
    let work = open_work(&first, "w").await;
    let mut queued = BTreeSet::new();
    for n in 0..ITEMS {
        let item = queue(&server, &work, &format!("item {n}"), "next_checkpoint");
        queued.insert(item["intent_id"].as_str().unwrap().to_owned());
    }
    let mut clients = vec![first];
    for _ in 1..20 {
        clients.push(server.client(Some(TOKEN)).await);
    }
    let started = Instant::now();
    let claimers = clients.into_iter().map(|client| {
        let work = work.clone();
        tokio::spawn(async move {
            let mut mine = Vec::new();
            loop {
                let r = call(&client, "steer_claim_next", json!({"work_id": work})).await.unwrap();
                let Some(item) = r.get("item") else { break };
                mine.push(item["intent_id"].as_str().unwrap().to_owned());
            }
            mine
        })
    });
    let mut claimed = Vec::new();
    for handle in claimers {
        claimed.extend(handle.await.unwrap());
    }
    eprintln!("20 claimers took {ITEMS} instructions in {:.1?}", started.elapsed());
    assert_eq!(claimed.len(), ITEMS, "each claimed once");
    let unique: BTreeSet<String> = claimed.into_iter().collect();
    assert_eq!(unique, queued);
    let (_, intents) = person(&server, "GET", &format!("/inbox/works/{work}/intents"), None);
    assert!(intents.as_array().unwrap().iter().all(|i| i["state"] == "claimed"));
}

/// Works and instructions live in the ledger: a restart keeps them; an instruction the
/// person left on a closed work waits for, and attaches to, the workspace's next work.
#[tokio::test]
async fn works_survive_a_restart_and_next_work_items_carry_over() {
    let env = http_env();
    let server = env.http(SERVE);
    let agent = server.client(Some(TOKEN)).await;
    let work = open_work(&agent, "w").await;
    let pending = queue(&server, &work, "run the tests", "next_checkpoint");
    let done = open_work(&agent, "w").await;
    call(&agent, "work_finish", json!({"work_id": done})).await.unwrap();
    let (status, later) = person(
        &server,
        "POST",
        &format!("/inbox/works/{done}/intents"),
        Some(json!({"body": "next time, start with the docs", "delivery": "next_checkpoint"})),
    );
    assert_eq!(status, 201);
    assert!(later.get("work_id").is_none(), "{later}");
    assert_eq!(later["delivery"], "next_work");
    drop(agent);
    drop(server);

    let server = env.http(SERVE);
    let agent = server.client(Some(TOKEN)).await;
    let st = call(&agent, "steer_status", json!({"work_id": work})).await.unwrap();
    assert_eq!((st["state"].as_str(), st["queued"].as_u64()), (Some("active"), Some(1)), "{st}");
    let item = call(&agent, "steer_claim_next", json!({"work_id": work})).await.unwrap();
    assert_eq!(item["item"]["intent_id"], pending["intent_id"]);
    call(&agent, "steer_complete", json!({"work_id": work, "intent_id": pending["intent_id"]}))
        .await
        .unwrap();
    assert_eq!(
        call(&agent, "work_finish", json!({"work_id": work})).await.unwrap()["closed"],
        true
    );
    let next = open_work(&agent, "w").await;
    let (_, carried) = person(&server, "GET", &format!("/inbox/works/{next}/intents"), None);
    assert_eq!(carried[0]["intent_id"], later["intent_id"], "{carried}");
    assert_eq!(carried[0]["delivery"], "after_current_work");
    assert_eq!(carried[0]["state"], "draft");
    let (_, other) = person(&server, "GET", "/inbox/works?workspace_id=v", None);
    assert_eq!(other, json!([]));
}

/// The hint: read, find, apply_patch and exec_command check a work_id first and then tell
/// the agent that the person queued something, at its next call.
#[tokio::test]
async fn the_coordination_hint_changes_after_a_person_queues() {
    let env = http_env();
    let root = env.path().join("ws/w");
    std::fs::write(root.join("a.txt"), "a\n").unwrap();
    let server = env.http(SERVE);
    let agent = server.client(Some(TOKEN)).await;
    // No work yet: no hint.
    let plain = call(&agent, "read", json!({"workspace_id": "w", "path": "a.txt"})).await.unwrap();
    assert!(plain.get("coordination").is_none(), "{plain}");
    let work = open_work(&agent, "w").await;
    let read = json!({"workspace_id": "w", "path": "a.txt", "work_id": work});
    let before = call(&agent, "read", read.clone()).await.unwrap()["coordination"].clone();
    assert_eq!(before["work_id"], work.as_str());
    assert_eq!(
        (before["claimable_now"].as_u64(), before["pending_user_items"].as_u64()),
        (Some(0), Some(0))
    );

    queue(&server, &work, "stop, wrong branch", "next_checkpoint");
    let after = call(&agent, "read", read).await.unwrap()["coordination"].clone();
    assert_eq!(
        (after["claimable_now"].as_u64(), after["pending_user_items"].as_u64()),
        (Some(1), Some(1))
    );
    assert!(after["queue_revision"].as_u64() > before["queue_revision"].as_u64(), "{after}");
    assert!(!after.to_string().contains("wrong branch"), "never the text: {after}");
    // Without a work_id, the workspace's only open work is the one hinted at.
    let found = call(&agent, "find", json!({"workspace_id": "w"})).await.unwrap();
    assert_eq!(found["coordination"], after);
    let exec = call(
        &agent,
        "exec_command",
        json!({"workspace_id": "w", "command": ["true"], "work_id": work}),
    )
    .await
    .unwrap();
    assert_eq!(exec["coordination"], after);
    assert_eq!(exec["work_id"], work.as_str());
    // The process tools carry it too, about the process's workspace.
    let pid = exec["process_id"].clone();
    let st =
        call(&agent, "process_status", json!({"process_id": pid, "wait_ms": 5000})).await.unwrap();
    assert_eq!(st["coordination"], after, "{st}");
    let out = call(&agent, "read_process", json!({"process_id": pid})).await.unwrap();
    assert_eq!(out["coordination"], after, "{out}");
    let patch = "*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch\n";
    let deadline = Instant::now() + Duration::from_secs(10);
    let applied = loop {
        let args = json!({"workspace_id": "w", "patch": patch, "work_id": work});
        match call(&agent, "apply_patch", args).await {
            Ok(r) => break r,
            Err(e) if e["code"] == "WORKSPACE_BUSY" && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("{e}"),
        }
    };
    assert_eq!(applied["coordination"], after);

    // A work_id that is not a work of this workspace is refused before anything runs.
    let other = open_work(&agent, "v").await;
    for work_id in ["work-invented", other.as_str()] {
        let c = json!({"workspace_id": "w", "path": "a.txt", "work_id": work_id});
        refused(&agent, "read", c, "WORK_NOT_FOUND").await;
        let c = json!({"workspace_id": "w", "work_id": work_id});
        refused(&agent, "find", c, "WORK_NOT_FOUND").await;
        let p = "*** Begin Patch\n*** Add File: c.txt\n+c\n*** End Patch\n";
        let c = json!({"workspace_id": "w", "patch": p, "work_id": work_id});
        refused(&agent, "apply_patch", c, "WORK_NOT_FOUND").await;
        let c = json!({"workspace_id": "w", "command": ["touch", "d.txt"], "work_id": work_id});
        refused(&agent, "exec_command", c, "WORK_NOT_FOUND").await;
    }
    assert!(!root.join("c.txt").exists() && !root.join("d.txt").exists());
    // Two open works in `w` and none named: no hint.
    open_work(&agent, "w").await;
    let found = call(&agent, "find", json!({"workspace_id": "w"})).await.unwrap();
    assert!(found.get("coordination").is_none(), "{found}");
}

/// Stop kills every process of the work's workspace, subtree and escapees included, before
/// it answers, and queues a stop notice the agent claims next.
#[tokio::test]
async fn stop_leaves_no_descendant_alive() {
    let env = http_env();
    let server = env.http(SERVE);
    let agent = server.client(Some(TOKEN)).await;
    let work = open_work(&agent, "w").await;
    queue(&server, &work, "earlier", "next_checkpoint");
    let script = "sleep 4613.1 & setsid sh -c 'sleep 4613.2 & sleep 4613.3' & \
                  (sleep 4613.4 &) ; echo started; wait";
    let r =
        call(&agent, "exec_command", json!({"workspace_id": "w", "command": ["sh", "-c", script]}))
            .await
            .unwrap();
    let id = r["process_id"].as_str().unwrap().to_owned();
    wait_output(&agent, &id, "started").await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive("4613.").len() < 4 {
        assert!(Instant::now() < deadline, "descendants did not start: {:?}", alive("4613."));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A process of another workspace is left alone.
    let other =
        call(&agent, "exec_command", json!({"workspace_id": "v", "command": ["sleep", "4614.5"]}))
            .await
            .unwrap();

    let (status, stopped) = person(
        &server,
        "POST",
        &format!("/inbox/works/{work}/stop"),
        Some(json!({"reason": "wrong branch"})),
    );
    assert_eq!(status, 200, "{stopped}");
    assert_eq!(stopped["ok"], true);
    assert_eq!(stopped["killed"], 1);
    assert_eq!(stopped["intent"]["kind"], "stop_notice");
    assert_eq!(stopped["intent"]["state"], "queued");
    assert_eq!(alive("4613."), Vec::<u32>::new(), "no descendant outlives the stop");
    assert!(!alive("4614.5").is_empty(), "another workspace's process is left alone");
    let st = call(&agent, "process_status", json!({"process_id": id})).await.unwrap();
    assert_eq!(
        (st["state"].as_str(), st["termination"].as_str()),
        (Some("exited"), Some("terminated"))
    );
    // The notice is first in line.
    let item = call(&agent, "steer_claim_next", json!({"work_id": work})).await.unwrap();
    assert_eq!(item["item"]["kind"], "stop_notice");
    assert_eq!(item["item"]["content"], "wrong branch");
    call(&agent, "terminate_process", json!({"process_id": other["process_id"]})).await.unwrap();
}
