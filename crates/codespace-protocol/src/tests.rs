//! The wire spelling of every enum-valued field, pinned, and the text round trip of
//! `expected_versions`.

use serde::Serialize;
use serde_json::{Value, json};

use super::*;

fn spell<T: Serialize>(value: T) -> Value {
    serde_json::to_value(value).unwrap()
}

#[test]
fn enum_fields_keep_their_wire_spelling() {
    let cases: Vec<(Value, &str)> = vec![
        (spell(DispatchStatus::Confirmed), "confirmed"),
        (spell(ProcessState::Running), "running"),
        (spell(ProcessState::Exited), "exited"),
        (spell(Termination::Exited), "exited"),
        (spell(Termination::Signaled), "signaled"),
        (spell(Termination::Timeout), "timeout"),
        (spell(Termination::Terminated), "terminated"),
        (spell(Termination::Unknown), "unknown"),
        (spell(ProcessOwner::Server), "server"),
        (spell(DisconnectEffect::KeepRunning), "keep_running"),
        (spell(DisconnectEffect::Terminate), "terminate"),
        (spell(RestartRecovery::None), "none"),
        (spell(SerializationScope::Workspace), "workspace"),
        (spell(RequestConflict::WaitFifo), "wait-fifo"),
        (spell(ProcessConflict::Reject), "reject"),
        (spell(ErrorCode::Timeout), "TIMEOUT"),
        (spell(OperationKind::Patch), "patch"),
        (spell(EventName::Minted), "minted"),
        (spell(EventName::Planned), "planned"),
        (spell(EventName::Finished), "finished"),
        (spell(EventName::Recovered), "recovered"),
        (spell(EventName::Restored), "restored"),
        (spell(ChangeKind::Add), "add"),
        (spell(ChangeKind::Update), "update"),
        (spell(ChangeKind::Delete), "delete"),
        (spell(ChangeKind::Move), "move"),
        (spell(PatchStatus::FailedRolledBack), "failed_rolled_back"),
        (spell(Transport::Stdio), "stdio"),
        (spell(Transport::StreamableHttp), "streamable-http"),
        (spell(Profile::ReadOnly), "read-only"),
        (spell(Profile::WorkspaceWrite), "workspace-write"),
        (spell(Approvals::Off), "off"),
        (spell(Approvals::Confirm), "confirm"),
        (spell(EnvironmentKind::Host), "host"),
        (spell(EnvironmentKind::LinuxContainer), "linux-container"),
        (spell(CommandSandbox::None), "none"),
        (spell(CommandSandbox::LinuxSandbox), "linux-sandbox"),
        (spell(SandboxSetting::On), "on"),
        (spell(SandboxSetting::Off), "off"),
        (spell(NetworkPolicy::Restricted), "restricted"),
        (spell(NetworkPolicy::Enabled), "enabled"),
        (spell(Enforcement::None), "none"),
        (spell(Enforcement::Enforced), "enforced"),
        (spell(Version::Absent), VERSION_ABSENT),
    ];
    for (got, want) in cases {
        assert_eq!(got, Value::String(want.to_owned()));
    }
}

#[test]
fn expected_versions_keep_the_text_sent() {
    let good = Version::of_bytes(b"x").to_string();
    let params: ApplyPatchParams = serde_json::from_value(json!({
        "workspace_id": "w",
        "patch": "p",
        "expected_versions": {"a": good, "b": "absent", "c": "sha256:nope"},
    }))
    .unwrap();
    assert_eq!(params.expected_versions["a"], ExpectedVersion::Valid(Version::of_bytes(b"x")));
    assert_eq!(params.expected_versions["b"], ExpectedVersion::Valid(Version::Absent));
    assert_eq!(params.expected_versions["c"], ExpectedVersion::Invalid("sha256:nope".to_owned()));
    assert_eq!(
        serde_json::to_value(&params.expected_versions).unwrap(),
        json!({"a": good, "b": "absent", "c": "sha256:nope"})
    );
    let not_text = serde_json::from_value::<ApplyPatchParams>(json!({
        "workspace_id": "w", "patch": "p", "expected_versions": {"a": 5},
    }));
    assert!(not_text.unwrap_err().to_string().contains("expected a string"));
}

#[test]
fn versions_show_their_pattern_in_output_schemas() {
    let schema = serde_json::to_value(schemars::schema_for!(FileChange)).unwrap();
    let before = &schema["properties"]["before_version"];
    assert_eq!(before["pattern"], "^(absent|sha256:[0-9a-f]{64})$", "{schema}");
    let schema = serde_json::to_value(schemars::schema_for!(ProcessStatusResult)).unwrap();
    assert!(schema.to_string().contains("signaled"), "{schema}");
}

/// The wait cap is declared once: every tool description and `wait_ms` schema that speaks
/// of it says the constant's value.
#[test]
fn every_wait_names_the_one_cap() {
    macro_rules! descriptions {
        ($($name:ident, $konst:ident, $params:ty => $result:ty, $effect:ident, $drive:ident, $title:literal, $description:literal;)*) => {
            [$((stringify!($name), $description)),*]
        };
    }
    let cap = format!("up to {MAX_WAIT_MS}");
    let waiting: Vec<&str> = crate::for_each_tool!(descriptions)
        .into_iter()
        .filter(|(_, d)| d.contains("wait_ms"))
        .map(|(name, d)| {
            assert!(d.contains(&cap), "{name} does not say {cap}: {d}");
            name
        })
        .collect();
    for tool in ["exec_command", "read_process", "process_status", "operation_resume"] {
        assert!(waiting.contains(&tool), "{tool} does not document its wait: {waiting:?}");
    }
    let at_most = format!("at most {MAX_WAIT_MS}");
    for schema in [
        schemars::schema_for!(ExecCommandParams),
        schemars::schema_for!(ReadProcessParams),
        schemars::schema_for!(ProcessStatusParams),
        schemars::schema_for!(crate::OperationResumeParams),
    ] {
        let schema = serde_json::to_value(schema).unwrap();
        let text = schema["properties"]["wait_ms"]["description"].as_str().unwrap();
        assert!(text.contains(&at_most), "{text}");
    }
}
