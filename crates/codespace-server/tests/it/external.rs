//! `sandbox: "external"` end to end: the operator declares the pod or VM the isolation
//! boundary, so commands run in the server's own namespaces, yet with no new privileges,
//! no capabilities, and Landlock and seccomp where the kernel has them; `workspace_info`,
//! `doctor` and the start-up log say which. `sandbox: "on"` is never weakened into it.

use serde_json::{Value, json};

use crate::process::{exec, output, wait_exit};
use crate::support::{Env, call};

fn enforced(info: &Value) -> Vec<String> {
    let list = &info["execution"]["isolation"]["external"]["enforced"];
    list.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect()
}

#[expect(clippy::disallowed_methods, reason = "reads CODESPACE_REQUIRE_SANDBOX")]
fn required() -> bool {
    std::env::var("CODESPACE_REQUIRE_SANDBOX").as_deref() == Ok("1")
}

#[tokio::test]
async fn external_runs_commands_in_the_servers_namespaces_confined_as_reported() {
    let mut env = Env::new();
    let root = env.workspace("ext", json!({"profile": "workspace-write", "sandbox": "external"}));
    env.workspace("off", json!({"profile": "workspace-write", "sandbox": "off"}));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let client = env.stdio().await;
    let info = call(&client, "workspace_info", json!({"workspace_id": "ext"})).await.unwrap();
    let iso = &info["execution"]["isolation"];
    assert_eq!(
        (&iso["command_sandbox"], &iso["sandbox_setting"]),
        (&json!("external"), &json!("external")),
        "{info}"
    );
    assert_eq!(info["execution"]["process"]["available"], true, "{info}");
    let on = enforced(&info);
    assert!(on.iter().any(|l| l.starts_with("no new privileges")), "{on:?}");
    let off = iso["external"]["not_enforced"].to_string();
    assert!(off.contains("namespaces") && off.contains("max_pids"), "{off}");
    let landlock = on.iter().any(|l| l.starts_with("Landlock: reads"));
    let scoped = on.iter().any(|l| l.starts_with("Landlock scoping"));
    let seccomp = on.iter().any(|l| l.starts_with("seccomp: no socket"));
    if required() {
        assert!(landlock && scoped && seccomp, "this host has Landlock and seccomp: {on:?}");
    }
    assert_eq!(
        info["execution"]["network"]["enforcement"],
        if seccomp { "enforced" } else { "none" },
        "{info}"
    );

    let own_pid_ns = std::fs::read_link("/proc/self/ns/pid").unwrap();
    let script = format!(
        "echo in > inside.txt && echo wrote-inside; readlink /proc/self/ns/pid; \
         grep -q 'NoNewPrivs:.1' /proc/self/status && echo nnp; \
         grep -q 'CapEff:.0000000000000000' /proc/self/status && echo no-caps; \
         echo x > /etc/codespace-external-probe 2>/dev/null && echo wrote-etc; \
         ls / >/dev/null 2>&1 && ls {home} >/dev/null 2>&1 && echo listed-home; \
         (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo connected; \
         server=$(awk '{{print $4}}' /proc/$PPID/stat); kill -0 \"$server\" 2>/dev/null && echo signalled-server; \
         true",
        home = std::env::var("HOME").unwrap_or_else(|_| "/root".to_owned()),
    );
    let id = exec(&client, "ext", &["bash", "-c", &script], false).await;
    let st = wait_exit(&client, &id).await;
    let out = output(&client, &id).await;
    assert_eq!(st["exit_code"], 0, "{st} {out}");
    assert!(out.contains("wrote-inside") && root.join("inside.txt").exists(), "{out}");
    // No PID namespace: the command sees the server's (the test's) own.
    assert!(out.contains(&own_pid_ns.display().to_string()), "{own_pid_ns:?}: {out}");
    assert!(out.contains("nnp") && out.contains("no-caps"), "{out}");
    if landlock {
        assert!(!out.contains("wrote-etc"), "{out}");
        assert!(!std::path::Path::new("/etc/codespace-external-probe").exists());
        assert!(!out.contains("listed-home"), "{out}");
    }
    if scoped {
        assert!(!out.contains("signalled-server"), "{out}");
    }
    if seccomp {
        assert!(!out.contains("connected"), "{out}");
    }
    // The same probes unconfined (`sandbox: "off"`) succeed: what failed above was the
    // confinement, not the probe.
    let control = script.replace("/etc/codespace-external-probe", "unconfined-probe");
    let id = exec(&client, "off", &["bash", "-c", &control], false).await;
    wait_exit(&client, &id).await;
    let out = output(&client, &id).await;
    for granted in ["wrote-etc", "listed-home", "connected", "signalled-server"] {
        assert!(out.contains(granted), "{granted} unconfined: {out}");
    }
    drop(listener);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn doctor_and_the_start_up_log_say_what_external_enforces() {
    let mut env = Env::new();
    env.workspace("ext", json!({"profile": "workspace-write", "sandbox": "external"}));
    let out =
        env.command().args(["doctor", "--json", "--config"]).arg(env.config()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["host"].get("apparmor_restricts_userns").is_some(), "{doc}");
    assert!(doc["enforcement"]["modes"]["external"].is_string(), "{doc}");
    let ws = &doc["registry"]["workspaces"][0];
    assert_eq!(ws["sandbox"], "external");
    assert!(ws["external"]["enforced"].to_string().contains("no new privileges"), "{ws}");
    let text = env.command().args(["doctor", "--config"]).arg(env.config()).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    for needle in ["AppArmor userns restriction", "sandbox=external", "not enforced:", "ext:"] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
    // The start-up log names the workspace and what its commands get.
    let server = env.http(&[]);
    let log = server.stderr.join("\n");
    assert!(
        log.contains("sandbox=external")
            && log.contains("workspace=ext")
            && log.contains("not_enforced"),
        "{log}"
    );
}
