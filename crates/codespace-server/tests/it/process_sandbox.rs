//! Commands in the sandbox end to end: confined to the workspace and the network policy,
//! and blind to the state directory even beneath an extra read root.

use serde_json::json;

use crate::process::{exec, output, wait_exit};
use crate::support::{Env, call};

#[tokio::test]
async fn sandbox_on_confines_commands_to_the_workspace_and_network() {
    let mut env = Env::new();
    let root = env.workspace("boxed", json!({"profile": "workspace-write"}));
    env.workspace("net", json!({"profile": "workspace-write", "network": "enabled"}));
    let outside = env.path().join("outside/planted.txt");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let client = env.stdio().await;
    let info = call(&client, "workspace_info", json!({"workspace_id": "boxed"})).await.unwrap();
    assert_eq!(info["execution"]["isolation"]["command_sandbox"], "linux-sandbox");
    let script = format!(
        "echo in > inside.txt && echo wrote-inside; echo x > {} 2>/dev/null && echo wrote-outside; echo x > /etc/codespace-probe 2>/dev/null && echo wrote-etc; (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo connected; grep -q NoNewPrivs:.1 /proc/self/status && echo nnp",
        outside.display()
    );
    let id = exec(&client, "boxed", &["bash", "-c", &script], false).await;
    wait_exit(&client, &id).await;
    let out = output(&client, &id).await;
    assert!(out.contains("wrote-inside"), "{out}");
    assert!(out.contains("nnp"), "{out}");
    for denied in ["wrote-outside", "wrote-etc", "connected"] {
        assert!(!out.contains(denied), "{denied} must be denied: {out}");
    }
    assert!(root.join("inside.txt").exists());
    assert!(!outside.exists() && !std::path::Path::new("/etc/codespace-probe").exists());
    // network=enabled: the same connect goes through.
    let id = exec(
        &client,
        "net",
        &["bash", "-c", &format!("(exec 3<>/dev/tcp/127.0.0.1/{port}) && echo connected")],
        false,
    )
    .await;
    wait_exit(&client, &id).await;
    assert!(output(&client, &id).await.contains("connected"));
    drop(listener);
    client.cancel().await.unwrap();
}

/// F7, R3 through the real binary: even with the whole scratch area as an extra read root,
/// a sandboxed command cannot see the server's state directory (ledger, token) or its
/// registry file, write
/// the extra root, home or the host's /tmp, and runs under the configured pid cap with a
/// private TMPDIR. The extra read root itself is readable.
#[tokio::test]
async fn sandbox_hides_the_state_directory_even_beneath_an_extra_read_root() {
    let mut env = Env::new();
    let scratch = env.path().to_path_buf();
    let root = env.workspace(
        "wide",
        json!({"profile": "workspace-write", "extra_read_roots": [scratch.display().to_string()]}),
    );
    std::fs::create_dir_all(scratch.join("outside")).unwrap();
    std::fs::write(scratch.join("outside/planted.txt"), "planted\n").unwrap();
    let state = env.state().join("codespace");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::set_permissions(&state, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    std::fs::write(state.join("http-token"), "s3cr3t-token\n").unwrap();
    let host_tmp = format!("/tmp/codespace-e2e-private-{}", std::process::id());
    let (client, _) = env.stdio_with(&[("CODESPACE_PROCESS_MAX_PIDS", "500")]).await;
    // The ledger exists once a patch went through.
    let patch = "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n";
    let r = call(&client, "apply_patch", json!({"workspace_id": "wide", "patch": patch}))
        .await
        .unwrap();
    assert_eq!(r["status"], "applied");
    assert!(state.join("operations.sqlite3").exists());
    let script = format!(
        "S='{s}'; E='{e}'; \
         for f in \"$S/http-token\" \"$S/operations.sqlite3\" \"$S/operations.sqlite3-wal\"; do \
           [ -e \"$f\" ] && echo \"visible:$f\"; done; \
         echo state-entries=$(ls -A \"$S\" | wc -l); echo config-bytes=$(wc -c < '{c}'); \
         cat \"$E/outside/planted.txt\"; \
         (echo x > \"$E/outside/new\") 2>/dev/null && echo wrote-extra; \
         (echo x > \"$S/operations.sqlite3\") 2>/dev/null && echo wrote-ledger; \
         (echo x > \"$HOME/codespace-e2e-probe\") 2>/dev/null && echo wrote-home; \
         echo x > '{t}' && echo wrote-private-tmp; \
         echo tmpdir=$TMPDIR; echo pid_max=$(cat /proc/sys/kernel/pid_max); cat a.txt",
        s = state.display(),
        e = scratch.display(),
        t = host_tmp,
        c = env.config().display(),
    );
    let id = exec(&client, "wide", &["bash", "-c", &script], false).await;
    let st = wait_exit(&client, &id).await;
    let out = output(&client, &id).await;
    assert_eq!(st["exit_code"], 0, "{out}");
    for line in [
        "state-entries=0",
        "config-bytes=0",
        "planted",
        "wrote-private-tmp",
        "tmpdir=/tmp",
        "pid_max=500",
        "a",
    ] {
        assert!(out.lines().any(|l| l == line), "missing {line:?}: {out}");
    }
    for denied in ["visible:", "wrote-extra", "wrote-ledger", "wrote-home"] {
        assert!(!out.contains(denied), "{denied}: {out}");
    }
    assert!(!std::path::Path::new(&host_tmp).exists(), "the private /tmp leaked");
    assert!(!scratch.join("outside/new").exists());
    assert_eq!(std::fs::read_to_string(state.join("http-token")).unwrap(), "s3cr3t-token\n");
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "a\n");
    // The ledger is intact: the patch's record is still there.
    let op = r["operation_id"].as_str().unwrap();
    let status = call(&client, "operation_status", json!({"operation_id": op})).await.unwrap();
    assert_eq!(status["status"], "applied");
    client.cancel().await.unwrap();
}
