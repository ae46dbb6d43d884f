//! Registry validation and allow() decision tables.

use codespace_types::{Approvals, Approvers, NetworkPolicy, SandboxSetting};

use super::*;

fn parse(text: &str) -> Result<Registry, RegistryError> {
    Registry::parse(text)
}

fn load_err(text: &str) -> RegistryError {
    parse(text).expect_err("load must fail")
}

#[test]
fn full_example_loads_with_defaults() {
    let reg = parse(
        r#"{"environments": {"box": {"kind": "linux-container"}},
            "workspaces": {
              "demo": {"root": "/abs/project", "profile": "workspace-write", "network": "restricted", "approvals": "off", "approvers": "person"},
              "ro": {"root": "/abs/other/"},
              "boxed": {"root": "/abs/boxed", "environment": "box", "sandbox": "off"}}}"#,
    )
    .unwrap();
    let demo = reg.get("demo").unwrap();
    assert_eq!(demo.profile, Profile::WorkspaceWrite);
    assert_eq!(demo.approvers, Approvers::Person);
    assert_eq!(reg.get("ro").unwrap().approvers, Approvers::AgentOrPerson);
    let ro = reg.get("ro").unwrap();
    assert_eq!(ro.root, std::path::Path::new("/abs/other"));
    assert_eq!(
        (ro.profile, ro.network, ro.approvals, ro.sandbox),
        (Profile::ReadOnly, NetworkPolicy::Restricted, Approvals::Off, SandboxSetting::On)
    );
    assert_eq!(ro.environment_kind, EnvironmentKind::Host);
    assert_eq!(reg.get("boxed").unwrap().environment_kind, EnvironmentKind::LinuxContainer);
}

#[test]
fn strict_failures_name_the_key() {
    let cases: &[(&str, &str, &str)] = &[
        (
            r#"{"workspaces": {"a": {"root": "rel/path"}}}"#,
            "workspaces.a.root",
            "not an absolute path",
        ),
        (r#"{"workspaces": {"a": {}}}"#, "workspaces.a.root", "missing"),
        (
            r#"{"workspaces": {"a": {"root": "/x", "profile": "host-admin"}}}"#,
            "workspaces.a.profile",
            "unknown value",
        ),
        (
            r#"{"workspaces": {"a": {"root": "/x", "network": "open"}}}"#,
            "workspaces.a.network",
            "unknown value",
        ),
        (
            r#"{"workspaces": {"a": {"root": "/x", "approvals": "maybe"}}}"#,
            "workspaces.a.approvals",
            "unknown value",
        ),
        (
            r#"{"workspaces": {"a": {"root": "/x", "sandbox": "best-effort"}}}"#,
            "workspaces.a.sandbox",
            "unknown value",
        ),
        (
            r#"{"workspaces": {"a": {"root": "/x", "roots": "/y"}}}"#,
            "workspaces.a.roots",
            "unknown key",
        ),
        (r#"{"workspace": {}}"#, "workspace", "unknown key"),
        (
            r#"{"workspaces": {"a": {"root": "/x", "extra_read_roots": "/opt"}}}"#,
            "workspaces.a.extra_read_roots",
            "array",
        ),
        (
            r#"{"workspaces": {"a": {"root": "/x", "extra_read_roots": ["/opt", "rel"]}}}"#,
            "workspaces.a.extra_read_roots[1]",
            "not an absolute path",
        ),
        (
            r#"{"workspaces": {"a": {"root": "/x", "extra_read_roots": [3]}}}"#,
            "workspaces.a.extra_read_roots[0]",
            "string",
        ),
        (
            r#"{"workspaces": {"a": {"root": "/x", "extra_read_roots": ["/home/u/../v"]}}}"#,
            "workspaces.a.extra_read_roots[0]",
            "'..'",
        ),
        (
            r#"{"workspaces": {"a": {"root": "/x", "environment": "nope"}}}"#,
            "workspaces.a.environment",
            "not registered",
        ),
        (r#"{"environments": {"e": {"kind": "vm"}}}"#, "environments.e.kind", "unknown kind"),
        (
            r#"{"workspaces": {"a": {"root": "/srv/app"}, "b": {"root": "/srv/app/sub"}}}"#,
            "workspaces.b.root",
            "inside",
        ),
        (
            r#"{"workspaces": {"a": {"root": "/srv/app"}, "b": {"root": "/srv/app"}}}"#,
            "workspaces.b.root",
            "inside",
        ),
        (r#"{"workspaces": {"a": {"root": "/"}}}"#, "workspaces.a.root", "filesystem root"),
        (r#"{"workspaces": {"a": {"root": "/x/../y"}}}"#, "workspaces.a.root", "'..'"),
        (r#"{"workspaces": {"a b": {"root": "/x"}}}"#, "workspaces.a b", "ids must be"),
        (r#"{"workspaces": {"a": {"root": 7}}}"#, "workspaces.a.root", "expected a string"),
        (r#"[1]"#, "(top level)", "expected an object"),
        (r#"{"#, "(top level)", "not valid JSON"),
    ];
    for (text, key, reason) in cases {
        let e = load_err(text);
        assert_eq!(&e.key, key, "for {text}: {e}");
        assert!(e.reason.contains(reason), "for {text}: {e}");
    }
}

#[test]
fn shared_string_prefix_is_not_nesting() {
    parse(r#"{"workspaces": {"a": {"root": "/srv/app"}, "b": {"root": "/srv/app-evil"}}}"#)
        .unwrap();
}

#[test]
fn allow_matrix() {
    let reg = parse(
        r#"{"environments": {"box": {"kind": "linux-container"}},
            "workspaces": {"ro": {"root": "/a"}, "ww": {"root": "/b", "profile": "workspace-write"},
                           "box": {"root": "/c", "profile": "workspace-write", "environment": "box"}}}"#,
    )
    .unwrap();
    let ro = reg.get("ro").unwrap();
    let ww = reg.get("ww").unwrap();
    let boxed = reg.get("box").unwrap();
    assert!(allow(ro, Action::Read).is_ok());
    assert!(matches!(allow(ro, Action::Write), Err(Denial::Profile { .. })));
    assert!(matches!(allow(ro, Action::Exec), Err(Denial::Profile { .. })));
    for a in [Action::Read, Action::Write, Action::Exec] {
        assert!(allow(ww, a).is_ok());
        let d = allow(boxed, a).unwrap_err();
        assert!(matches!(d, Denial::BackendUnavailable { .. }));
        assert!(d.to_string().contains("unavailable"));
    }
}

#[test]
fn zero_config_is_read_only_unless_write() {
    let r = Registry::zero_config("/tmp/project".into(), false).unwrap();
    assert_eq!(r.get(DEFAULT_WORKSPACE_ID).unwrap().profile, Profile::ReadOnly);
    let w = Registry::zero_config("/tmp/project".into(), true).unwrap();
    assert_eq!(w.get(DEFAULT_WORKSPACE_ID).unwrap().profile, Profile::WorkspaceWrite);
}

#[test]
fn extra_read_roots_are_normalised() {
    let r = Registry::parse(
        r#"{"workspaces": {"a": {"root": "/x", "extra_read_roots": ["/home/u/.rustup/", "/opt//tc"]}}}"#,
    )
    .unwrap();
    let ws = r.get("a").unwrap();
    assert_eq!(
        ws.extra_read_roots,
        vec![std::path::PathBuf::from("/home/u/.rustup"), std::path::PathBuf::from("/opt/tc")]
    );
    let none = Registry::parse(r#"{"workspaces": {"a": {"root": "/x"}}}"#).unwrap();
    assert!(none.get("a").unwrap().extra_read_roots.is_empty());
}

#[test]
fn shapes_serde_would_accept_are_refused() {
    let cases: &[(&str, &str, &str)] = &[
        // Derived decoders take a struct's fields as an array; the registry does not.
        (r#"{"workspaces": {"a": ["/x"]}}"#, "workspaces.a", "expected an object, found an array"),
        (r#"{"environments": {"e": ["host"]}}"#, "environments.e", "expected an object"),
        // An explicit null is not an absent key.
        (r#"{"workspaces": {"a": {"root": null}}}"#, "workspaces.a.root", "expected a string"),
        (
            r#"{"workspaces": {"a": {"root": "/x", "profile": null}}}"#,
            "workspaces.a.profile",
            "expected a string, found null",
        ),
        (
            r#"{"workspaces": {"a": {"root": "/x", "environment": null}}}"#,
            "workspaces.a.environment",
            "expected a string",
        ),
        (r#"{"workspaces": null}"#, "workspaces", "expected an object, found null"),
        (r#"{"environments": {"e": {}}}"#, "environments.e.kind", "missing"),
        (
            r#"{"environments": {"e": {"kind": 1}}}"#,
            "environments.e.kind",
            "expected a string, found a number",
        ),
        (
            r#"{"environments": {"host": {"kind": "linux-container"}}}"#,
            "environments.host",
            "cannot change kind",
        ),
        (r#"{} {}"#, "(top level)", "not valid JSON"),
    ];
    for (text, key, reason) in cases {
        let e = load_err(text);
        assert_eq!(&e.key, key, "for {text}: {e}");
        assert!(e.reason.contains(reason), "for {text}: {e}");
    }
}

#[test]
fn messages_name_the_accepted_values() {
    let e = load_err(r#"{"workspaces": {"a": {"root": "/x", "profile": "host-admin"}}}"#);
    assert_eq!(
        e.reason,
        r#"unknown value "host-admin" (expected "read-only" or "workspace-write")"#
    );
    let e = load_err(r#"{"environments": {"e": {"kind": "vm"}}}"#);
    assert_eq!(e.reason, r#"unknown kind "vm" (expected "host" or "linux-container")"#);
    let e = load_err(r#"{"workspaces": {"a": {"root": "/x", "roots": "/y"}}}"#);
    assert_eq!(
        e.reason,
        "unknown key (expected one of: root, profile, network, approvals, approvers, sandbox, \
         environment, extra_read_roots, env, timeout_secs, max_timeout_secs, kill_grace_ms)"
    );
    let e = load_err(r#"{"workspace": {}}"#);
    assert_eq!(e.reason, "unknown key (expected one of: environments, workspaces)");
}

#[test]
fn command_settings_load_and_give_the_limits() {
    let r = parse(
        r#"{"workspaces": {
            "a": {"root": "/a", "env": {"PATH": "/opt/x/bin:/usr/bin", "GIT_AUTHOR_NAME": "A"},
                  "timeout_secs": 90, "max_timeout_secs": 600},
            "b": {"root": "/b"},
            "c": {"root": "/c", "max_timeout_secs": 10},
            "d": {"root": "/d", "timeout_secs": 5, "kill_grace_ms": 0},
            "e": {"root": "/e", "kill_grace_ms": 60000}}}"#,
    )
    .unwrap();
    let a = r.get("a").unwrap();
    assert_eq!(a.env.get("PATH").map(String::as_str), Some("/opt/x/bin:/usr/bin"));
    assert_eq!(a.timeouts(30), Timeouts { default_secs: 90, max_secs: 600 });
    assert_eq!(a.timeouts(30).grant(None), Granted { secs: 90, clamped: false });
    assert_eq!(a.timeouts(30).grant(Some(0)), Granted { secs: 90, clamped: false });
    assert_eq!(a.timeouts(30).grant(Some(120)), Granted { secs: 120, clamped: false });
    assert_eq!(a.timeouts(30).grant(Some(5000)), Granted { secs: 600, clamped: true });
    assert_eq!(r.get("b").unwrap().timeouts(30), Timeouts { default_secs: 30, max_secs: 30 });
    // A ceiling under the server's default cuts the default too.
    assert_eq!(r.get("c").unwrap().timeouts(30), Timeouts { default_secs: 10, max_secs: 10 });
    // Without a ceiling, the default is the ceiling.
    assert_eq!(r.get("d").unwrap().timeouts(30), Timeouts { default_secs: 5, max_secs: 5 });
    assert!(r.get("b").unwrap().env.is_empty());
    // The kill grace: 2 s unless set; 0 (SIGKILL at once) and a minute are both accepted.
    let grace = |id| r.get(id).unwrap().kill_grace_ms;
    assert_eq!((grace("a"), grace("d"), grace("e")), (2_000, 0, 60_000));
}

#[test]
fn command_settings_failures_name_the_key() {
    let ws = |extra: &str| format!(r#"{{"workspaces": {{"a": {{"root": "/x", {extra}}}}}}}"#);
    let cases: &[(String, &str, &str)] = &[
        (
            ws(r#""env": {"CODESPACE_HTTP_TOKEN": "x"}"#),
            "workspaces.a.env.CODESPACE_HTTP_TOKEN",
            "server's own",
        ),
        (
            ws(r#""env": {"codespace_config": "x"}"#),
            "workspaces.a.env.codespace_config",
            "never passed",
        ),
        (ws(r#""env": {"A=B": "x"}"#), "workspaces.a.env.A=B", "variable name"),
        (ws(r#""env": {"": "x"}"#), "workspaces.a.env.", "variable name"),
        (ws(r#""env": {"1X": "x"}"#), "workspaces.a.env.1X", "variable name"),
        (ws(r#""env": {"X": "a\u0000b"}"#), "workspaces.a.env.X", "NUL"),
        (ws(r#""env": {"X": 3}"#), "workspaces.a.env.X", "expected a string, found a number"),
        (ws(r#""env": ["X"]"#), "workspaces.a.env", "expected an object"),
        (ws(r#""timeout_secs": 0"#), "workspaces.a.timeout_secs", "between 1 and 86400"),
        (ws(r#""timeout_secs": 86401"#), "workspaces.a.timeout_secs", "between 1 and 86400"),
        (ws(r#""timeout_secs": "90""#), "workspaces.a.timeout_secs", "expected a whole number"),
        (ws(r#""timeout_secs": 1.5"#), "workspaces.a.timeout_secs", "found a number"),
        (ws(r#""timeout_secs": null"#), "workspaces.a.timeout_secs", "found null"),
        (ws(r#""timeout_secs": -1"#), "workspaces.a.timeout_secs", "-1"),
        (ws(r#""max_timeout_secs": 0"#), "workspaces.a.max_timeout_secs", "between 1"),
        (
            ws(r#""timeout_secs": 60, "max_timeout_secs": 30"#),
            "workspaces.a.max_timeout_secs",
            "below timeout_secs",
        ),
        (ws(r#""timeout": 60"#), "workspaces.a.timeout", "unknown key"),
        (ws(r#""kill_grace_ms": 60001"#), "workspaces.a.kill_grace_ms", "between 0 and 60000"),
        (ws(r#""kill_grace_ms": -1"#), "workspaces.a.kill_grace_ms", "-1"),
        (ws(r#""kill_grace_ms": 1.5"#), "workspaces.a.kill_grace_ms", "found a number"),
        (ws(r#""kill_grace_ms": null"#), "workspaces.a.kill_grace_ms", "found null"),
        (
            ws(r#""kill_grace_ms": "2000""#),
            "workspaces.a.kill_grace_ms",
            "expected a whole number of milliseconds",
        ),
    ];
    for (text, key, reason) in cases {
        let e = load_err(text);
        assert_eq!(&e.key, key, "for {text}: {e}");
        assert!(e.reason.contains(reason), "for {text}: {e}");
    }
}
