//! ARCHITECTURE.md's dependency invariants, read from `cargo metadata`: the pure crates'
//! dependencies, the layer order of the internal arrows, who sees both the runner and the
//! store, and who knows rmcp and axum.

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::Value;

/// The layers, bottom first. An internal dependency must point to a lower layer: the leaves
/// see no other crate of the workspace.
const LAYERS: &[(&str, u8)] = &[
    ("codespace-types", 0),
    ("codespace-protocol", 1),
    ("codespace-policy", 1),
    ("codespace-patch", 1),
    ("codespace-fs", 1),
    ("codespace-sandbox", 1),
    ("codespace-store", 1),
    ("codespace-wire", 1),
    ("codespace-process", 2),
    ("codespace-watch", 2),
    ("codespace-files", 2),
    ("codespace-runner", 3),
    ("codespace-gateway", 4),
    ("codespace-server", 5),
];

/// Every normal dependency a pure crate may have: data and error types, no I/O.
const PURE: &[(&str, &[&str])] = &[
    ("codespace-protocol", &["codespace-types", "schemars", "serde", "serde_json"]),
    (
        "codespace-policy",
        &["codespace-types", "serde", "serde_json", "serde_path_to_error", "thiserror"],
    ),
    ("codespace-patch", &["codespace-types", "serde", "similar", "thiserror"]),
    ("codespace-types", &["hex", "schemars", "serde", "sha2", "thiserror"]),
];

/// (crate, kind, dependency) for every workspace member; kind is `normal`, `dev` or `build`.
fn dependencies() -> Vec<(String, String, String)> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut deps = Vec::new();
    for package in doc["packages"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap();
        for dep in package["dependencies"].as_array().unwrap() {
            let kind = dep["kind"].as_str().unwrap_or("normal");
            deps.push((name.to_owned(), kind.to_owned(), dep["name"].as_str().unwrap().to_owned()));
        }
    }
    assert!(deps.iter().any(|(c, ..)| c == "codespace-server"), "not the workspace: {deps:?}");
    deps
}

#[test]
fn every_member_has_a_layer() {
    let layers: BTreeMap<&str, u8> = LAYERS.iter().copied().collect();
    for (krate, ..) in dependencies() {
        assert!(layers.contains_key(krate.as_str()), "{krate} has no layer in this test");
    }
}

#[test]
fn pure_crates_have_no_io_dependency() {
    let deps = dependencies();
    for (krate, allowed) in PURE {
        for (_, kind, dep) in deps.iter().filter(|(c, k, _)| c == krate && k != "dev") {
            assert!(
                allowed.contains(&dep.as_str()),
                "{krate} is pure (no I/O) but has the {kind} dependency {dep}; allowed: {allowed:?}"
            );
        }
    }
}

#[test]
fn internal_arrows_point_down() {
    let layers: BTreeMap<&str, u8> = LAYERS.iter().copied().collect();
    for (krate, kind, dep) in dependencies() {
        let (Some(from), Some(to)) = (layers.get(krate.as_str()), layers.get(dep.as_str())) else {
            continue;
        };
        assert!(to < from, "{krate} (layer {from}) has the {kind} dependency {dep} (layer {to})");
    }
}

/// The gateway reaches files and processes only through `codespace_runner::Runner`: it has
/// no normal dependency on the crates beneath the runner that reach the machine. It may
/// depend on the file operations and the patch planner for the patch transaction's plans,
/// answers and refusals: neither reaches a disk without a `codespace_fs::Root`, which the
/// gateway cannot name.
#[test]
fn the_gateway_reaches_the_machine_only_through_the_runner() {
    const MAY_NAME: &[&str] = &["codespace-files", "codespace-patch"];
    let deps = dependencies();
    // Everything the runner depends on, directly or not, within the workspace.
    let mut beneath = vec!["codespace-runner".to_owned()];
    let mut i = 0;
    while i < beneath.len() {
        let from = beneath[i].clone();
        for (_, _, dep) in deps.iter().filter(|(c, k, _)| *c == from && k != "dev") {
            if dep.starts_with("codespace-") && !beneath.contains(dep) {
                beneath.push(dep.clone());
            }
        }
        i += 1;
    }
    for below in ["codespace-fs", "codespace-watch", "codespace-process", "codespace-sandbox"] {
        assert!(
            !deps.iter().any(|(c, k, d)| c == "codespace-gateway" && k != "dev" && d == below),
            "the gateway depends on {below} directly instead of through the runner"
        );
    }
    for (_, _, dep) in deps.iter().filter(|(c, k, _)| c == "codespace-gateway" && k != "dev") {
        let under = beneath[1..].contains(dep);
        let pure = PURE.iter().any(|(p, _)| p == dep);
        assert!(
            !under || pure || MAY_NAME.contains(&dep.as_str()),
            "the gateway depends on {dep}, beneath the runner: reach it through the runner"
        );
    }
}

/// Only the gateway combines the runner and the ledger; the server, the composition root,
/// builds both and hands them to it.
#[test]
fn only_the_gateway_sees_both_runner_and_store() {
    let deps = dependencies();
    let sees =
        |krate: &str, dep: &str| deps.iter().any(|(c, k, d)| c == krate && k != "dev" && d == dep);
    for (krate, _) in LAYERS {
        if !matches!(*krate, "codespace-gateway" | "codespace-server") {
            assert!(
                !(sees(krate, "codespace-runner") && sees(krate, "codespace-store")),
                "{krate} depends on both the runner and the store"
            );
        }
    }
    assert!(!sees("codespace-runner", "codespace-store"), "the runner never touches the ledger");
    assert!(!sees("codespace-store", "codespace-fs"), "the store never touches a workspace file");
}

#[test]
fn only_the_server_knows_rmcp_and_axum() {
    for (krate, kind, dep) in dependencies() {
        if matches!(dep.as_str(), "rmcp" | "axum") {
            assert_eq!(krate, "codespace-server", "{krate} has the {kind} dependency {dep}");
        }
    }
}

/// Every word that crosses a layer boundary is one type, declared in `codespace-types` with
/// `words!` (or, for a value with fields, once there): no crate keeps a twin of it that would
/// need a converter.
#[test]
fn every_shared_word_is_declared_once() {
    const WORDS: &[&str] = &[
        "Profile",
        "Approvals",
        "Approvers",
        "EnvironmentKind",
        "SandboxSetting",
        "NetworkPolicy",
        "ChangeKind",
        "PatchStatus",
        "EventName",
        "ProcessState",
        "Termination",
        "SignalInfo",
        "RootStatus",
        "WatchState",
        "ObservedChange",
        "ApprovalState",
        "HeldTool",
        "Decision",
        "WorkState",
        "IntentState",
        "Delivery",
        "IntentKind",
        "IntentAuthor",
    ];
    fn sources(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let crates = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let mut files = Vec::new();
    sources(crates, &mut files);
    let mut declared: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for word in WORDS {
            for kind in ["enum", "struct"] {
                if text.contains(&format!("pub {kind} {word} {{")) {
                    declared.entry(word).or_default().push(file.display().to_string());
                }
            }
        }
    }
    for word in WORDS {
        let at = declared.get(word).cloned().unwrap_or_default();
        assert_eq!(at.len(), 1, "{word} is declared {} times: {at:?}", at.len());
        assert!(
            at.iter().all(|f| f.contains("codespace-types")),
            "{word} outside the types: {at:?}"
        );
    }
}
