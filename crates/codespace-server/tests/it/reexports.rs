//! No re-export tunnels: a name is imported from the crate that defines it, so a reader of
//! `use codespace_x::Name` finds `Name` in `codespace-x`. Every `pub use codespace_*` in a
//! crate's sources must be an entry of [`ALLOWED`], with exactly the names listed there.

use std::collections::BTreeSet;
use std::path::Path;

/// (file under `crates/`, the crate re-exported from, the names, why the tunnel stays).
const ALLOWED: &[(&str, &str, &[&str], &str)] = &[
    (
        "codespace-runner/src/lib.rs",
        "codespace_fs",
        &["Cancel", "FsError", "Progress", "WorkspacePath"],
        "words of the Runner interface the gateway names; the gateway may not depend on \
         codespace-fs, which opens workspace files",
    ),
    (
        "codespace-runner/src/lib.rs",
        "codespace_process",
        &[
            "ExternalPolicy",
            "ProcError",
            "SandboxPolicy",
            "TTY_COLS",
            "TTY_ROWS",
            "Terminate",
            "WaitFor",
        ],
        "words of the Runner interface the gateway names; the gateway may not depend on \
         codespace-process, which starts processes",
    ),
    (
        "codespace-runner/src/lib.rs",
        "codespace_watch",
        &["BadCursor", "Cursor", "MAX_VERSION_ENTRIES", "WatchReport"],
        "words of the Runner interface the gateway names; the gateway may not depend on \
         codespace-watch, which watches the disk",
    ),
    (
        "codespace-process/src/lib.rs",
        "codespace_sandbox",
        &["ExternalPolicy", "SandboxPolicy"],
        "the supervisor's configuration speaks the sandbox's policies, and the runner names it \
         through the supervisor",
    ),
    (
        "codespace-fs/src/lib.rs",
        "codespace_types",
        &["ParseVersionError", "Version"],
        "shared vocabulary that lives in codespace-types; its users still import it from here",
    ),
    (
        "codespace-protocol/src/lib.rs",
        "codespace_types",
        &[
            "ApprovalState",
            "Approvals",
            "ChangeKind",
            "Decision",
            "EnvironmentKind",
            "EventName",
            "HeldTool",
            "LineDifference",
            "NetworkPolicy",
            "ObservedChange",
            "ParseVersionError",
            "PatchStatus",
            "ProcessState",
            "Profile",
            "RootStatus",
            "SandboxSetting",
            "SignalInfo",
            "Termination",
            "Version",
            "WatchState",
        ],
        "shared vocabulary that lives in codespace-types; its users still import it from here",
    ),
    (
        "codespace-protocol/src/work.rs",
        "codespace_types",
        &["Delivery", "IntentKind", "IntentState", "WorkState"],
        "shared vocabulary that lives in codespace-types; its users still import it from here",
    ),
    (
        "codespace-store/src/lib.rs",
        "codespace_types",
        &[
            "ApprovalState",
            "ChangeKind",
            "Decision",
            "Delivery",
            "EventName",
            "HeldTool",
            "IntentKind",
            "IntentState",
            "Version",
            "WorkState",
        ],
        "shared vocabulary that lives in codespace-types; its users still import it from here",
    ),
];

/// Every `pub use codespace_*` statement under `dir`: (file under `crates/`, crate, names).
fn reexports(crates: &Path, dir: &Path, out: &mut Vec<(String, String, BTreeSet<String>)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            reexports(crates, &path, out);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let file = path.strip_prefix(crates).unwrap().to_string_lossy().into_owned();
        for rest in text.split("pub use codespace_").skip(1) {
            let statement = &rest[..rest.find(';').unwrap()];
            let (krate, items) = statement.split_once("::").unwrap();
            let names = items
                .trim_matches(|c: char| c == '{' || c == '}' || c.is_whitespace())
                .split(',')
                .map(|n| n.split(" as ").last().unwrap().trim().to_owned())
                .filter(|n| !n.is_empty())
                .collect();
            out.push((file.clone(), format!("codespace_{krate}"), names));
        }
    }
}

#[test]
fn no_crate_reexports_another_crates_names_off_the_allowlist() {
    let crates = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let mut found = Vec::new();
    for entry in std::fs::read_dir(crates).unwrap() {
        let src = entry.unwrap().path().join("src");
        if src.is_dir() {
            reexports(crates, &src, &mut found);
        }
    }
    for (file, krate, names) in &found {
        let allowed = ALLOWED.iter().find(|(f, k, ..)| f == file && k == krate);
        let Some((.., allowed_names, _)) = allowed else {
            panic!(
                "{file} re-exports {names:?} of {krate}: import them from {krate} where they \
                 are used instead (or add a reasoned entry to ALLOWED)"
            );
        };
        let allowed_names: BTreeSet<String> = allowed_names.iter().map(|&n| n.to_owned()).collect();
        assert_eq!(names, &allowed_names, "{file}: the re-exports of {krate} differ from ALLOWED");
    }
    for (file, krate, ..) in ALLOWED {
        assert!(
            found.iter().any(|(f, k, _)| f == file && k == krate),
            "ALLOWED lists {file}'s re-export of {krate}, which is gone: drop the entry"
        );
    }
}
