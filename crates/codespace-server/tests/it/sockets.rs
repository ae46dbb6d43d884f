//! Unix sockets under `network: "restricted"`, as `workspace_info` states them: a host
//! process listening on a pathname socket inside the workspace or an extra read root is
//! reachable from a sandboxed command; one elsewhere on the host, and a host abstract
//! socket, are not.

use std::os::linux::net::SocketAddrExt as _;
use std::os::unix::net::{SocketAddr, UnixListener};

use serde_json::json;

use crate::process::{exec, output, wait_exit};
use crate::support::{Env, call};

/// Python that connects to each `(label, address)` and prints `label=ok` or `label=<errno>`.
fn connects(targets: &[(&str, String)]) -> String {
    let mut py = String::from("import socket\n");
    for (label, addr) in targets {
        py.push_str(&format!(
            "s = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect({addr:?})\n    \
             print('{label}=ok')\nexcept OSError as e:\n    print('{label}=%d' % e.errno)\n"
        ));
    }
    py
}

#[tokio::test]
async fn restricted_reaches_host_sockets_only_inside_visible_roots() {
    let mut env = Env::new();
    let extra = env.path().join("extra");
    std::fs::create_dir_all(&extra).unwrap();
    let root = env.workspace(
        "ws",
        json!({"profile": "workspace-write", "network": "restricted",
               "extra_read_roots": [extra.display().to_string()]}),
    );
    let in_ws = root.join("app.sock");
    let in_extra = extra.join("x.sock");
    let elsewhere = env.path().join("outside/o.sock");
    let _listeners: Vec<UnixListener> =
        [&in_ws, &in_extra, &elsewhere].iter().map(|p| UnixListener::bind(p).unwrap()).collect();
    let name = format!("codespace-e2e-{}", std::process::id());
    let _abstract =
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).unwrap()).unwrap();
    let client = env.stdio().await;

    let info = call(&client, "workspace_info", json!({"workspace_id": "ws"})).await.unwrap();
    let note = info["execution"]["network"]["note"].as_str().unwrap_or_default().to_owned();
    assert!(
        note.contains(
            "pathname unix sockets inside the workspace or an extra read root stay reachable"
        ),
        "{info}"
    );
    assert!(note.contains("abstract unix sockets"), "{info}");

    let py = connects(&[
        ("workspace", in_ws.display().to_string()),
        ("extra", in_extra.display().to_string()),
        ("elsewhere", elsewhere.display().to_string()),
        ("abstract", format!("\0{name}")),
    ]);
    let id = exec(&client, "ws", &["/usr/bin/python3", "-c", &py], false).await;
    wait_exit(&client, &id).await;
    let out = output(&client, &id).await;
    let has = |line: &str| out.lines().any(|l| l.trim() == line);
    assert!(has("workspace=ok") && has("extra=ok"), "documented as reachable: {out}");
    assert!(
        has(&format!("elsewhere={}", rustix::io::Errno::NOENT.raw_os_error())),
        "outside the private root: {out}"
    );
    assert!(out.lines().any(|l| l.starts_with("abstract=") && l.trim() != "abstract=ok"), "{out}");
    client.cancel().await.unwrap();
}
