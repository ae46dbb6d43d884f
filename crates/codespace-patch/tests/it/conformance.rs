//! The 45 shared V4A conformance scenarios, byte for byte over the whole tree, with the
//! product's expectations where they differ from Codex (010, 011 refused; 015 leaves nothing).

use std::path::PathBuf;

use codespace_patch::ErrorKind;

use crate::support::{Outcome, Tree, run};

const SCENARIO_COUNT: usize = 45;

/// `$CODESPACE_V4A_CONFORMANCE`, else `shared/conformance/v4a` beside the repository.
pub(crate) fn conformance_dir() -> PathBuf {
    let dir = match std::env::var_os("CODESPACE_V4A_CONFORMANCE") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/v4a"),
    };
    assert!(
        dir.join("manifest.json").is_file() && dir.join("scenarios").is_dir(),
        "V4A conformance data not found at {} (set CODESPACE_V4A_CONFORMANCE to the directory \
         holding manifest.json and scenarios/)",
        dir.display()
    );
    dir
}

/// The part of `manifest.json` these tests read; the other keys describe the scenarios for
/// people and are not checked here.
#[derive(serde::Deserialize)]
struct Manifest {
    scenarios: Vec<Record>,
}

#[derive(serde::Deserialize)]
struct Record {
    name: String,
    codex_outcome: String,
}

/// `(name, codex_outcome)` per manifest record.
fn manifest_records(text: &str) -> Vec<(String, String)> {
    let manifest: Manifest =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("manifest.json does not decode: {e}"));
    manifest.scenarios.into_iter().map(|r| (r.name, r.codex_outcome)).collect()
}

/// How the product must end a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// Final tree = `expected/`.
    Applied,
    /// Refused by the parser; final tree = `input/`.
    ParseRefused,
    /// Refused by the planner with this kind; final tree = `input/`.
    PlanRefused(ErrorKind),
}

fn product_expectation(name: &str) -> Expect {
    let prefix = name.split('_').take(if name.starts_with("extra") { 2 } else { 1 });
    match prefix.collect::<Vec<_>>().join("_").as_str() {
        "005" => Expect::PlanRefused(ErrorKind::InvalidPatch),
        "006" | "extra_007" | "extra_014" => Expect::PlanRefused(ErrorKind::ContextMismatch),
        "007" | "009" | "015" => Expect::PlanRefused(ErrorKind::FileNotFound),
        "008" | "013" | "extra_013" => Expect::ParseRefused,
        // Product rule (a): Codex overwrites, we refuse.
        "010" => Expect::PlanRefused(ErrorKind::MoveDestinationExists),
        "011" => Expect::PlanRefused(ErrorKind::AddFileExists),
        "012" => Expect::PlanRefused(ErrorKind::NotAFile),
        _ => Expect::Applied,
    }
}

/// Scenarios whose `expected/` is Codex's result, not the product's.
const PRODUCT_DIFFERS: [&str; 3] = [
    "010_move_overwrites_existing_destination",
    "011_add_overwrites_existing_file",
    "015_failure_after_partial_success_leaves_changes",
];

#[test]
fn all_conformance_scenarios() {
    let dir = conformance_dir();
    let manifest = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    let records = manifest_records(&manifest);
    let mut on_disk: Vec<String> = std::fs::read_dir(dir.join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = records.iter().map(|(n, _)| n.clone()).collect();
    listed.sort();
    assert_eq!(listed, on_disk, "manifest.json and scenarios/ disagree");

    let mut checked = 0;
    let mut failures = Vec::new();
    for (name, codex_outcome) in &records {
        let sdir = dir.join("scenarios").join(name);
        let patch = String::from_utf8(std::fs::read(sdir.join("patch.txt")).unwrap()).unwrap();
        let input = Tree::load(&sdir.join("input"));
        let expected = Tree::load(&sdir.join("expected"));
        let expect = product_expectation(name);
        let differs = PRODUCT_DIFFERS.contains(&name.as_str());

        // The product refuses exactly what Codex refuses, plus rule (a).
        assert_eq!(
            expect == Expect::Applied,
            codex_outcome == "applied" && !differs,
            "{name}: product expectation {expect:?} vs codex outcome {codex_outcome}"
        );

        let outcome = run(&input, &patch);
        let (final_tree, problem) = match (&outcome, expect) {
            (Outcome::Applied(t), Expect::Applied) => (t.clone(), None),
            (Outcome::ParseError(_), Expect::ParseRefused) => (input.clone(), None),
            (Outcome::PlanError(e), Expect::PlanRefused(kind)) if e.kind() == kind => {
                (input.clone(), None)
            }
            (other, _) => (input.clone(), Some(format!("expected {expect:?}, got {other:?}"))),
        };
        // A refused patch leaves the input; 010/011/015's expected/ is Codex's, not ours.
        let want = if differs { &input } else { &expected };
        let problem = problem.or_else(|| {
            (final_tree != *want)
                .then(|| format!("tree differs:\n got {final_tree:?}\nwant {want:?}"))
        });
        if differs {
            assert_ne!(input, expected, "{name}: Codex's result should differ from input");
        }
        if let Some(p) = problem {
            failures.push(format!("{name}: {p}"));
        }
        checked += 1;
    }
    println!("checked {checked} V4A conformance scenarios");
    assert!(failures.is_empty(), "{} scenario(s) failed:\n{}", failures.len(), failures.join("\n"));
    assert_eq!(checked, SCENARIO_COUNT);
}

/// The messages of refused scenarios keep Codex's wording and add the location.
#[test]
fn conformance_messages() {
    let dir = conformance_dir().join("scenarios");
    let message = |name: &str| {
        let sdir = dir.join(name);
        let patch = std::fs::read_to_string(sdir.join("patch.txt")).unwrap();
        match run(&Tree::load(&sdir.join("input")), &patch) {
            Outcome::Applied(_) => panic!("{name} applied"),
            Outcome::ParseError(e) => e.to_string(),
            Outcome::PlanError(e) => e.to_string(),
        }
    };
    assert_eq!(
        message("006_rejects_missing_context"),
        "Failed to find expected lines in modify.txt (chunk 1, patch line 3):\nmissing"
    );
    assert_eq!(
        message("008_rejects_empty_update_hunk"),
        "invalid hunk at line 2 (file 'foo.txt'), Update file hunk for path 'foo.txt' is empty"
    );
    assert!(message("013_rejects_invalid_hunk_header").starts_with(
        "invalid hunk at line 2, '*** Frobnicate File: foo' is not a valid hunk header."
    ));
    assert_eq!(
        message("extra_014_blank_line_does_not_start_new_chunk"),
        "Failed to find expected lines in two_chunks.txt (chunk 1, patch line 3):\nb\n\nd"
    );
    assert_eq!(
        message("extra_013_nested_context_headers_rejected"),
        "invalid hunk at line 4 (file 'nested.py', chunk 1), Unexpected line found in update \
         hunk: '@@     def f(self):'. Every line should start with ' ' (context line), '+' \
         (added line), or '-' (removed line)"
    );
    let m = message("extra_007_overlapping_eof_chunks_rejected");
    assert!(
        m.starts_with("Failed to find expected lines in overlapping.txt (chunk 2, patch line 6;"),
        "{m}"
    );
    assert!(m.contains("'*** End of File'") && m.ends_with(":\none"), "{m}");
    assert_eq!(
        message("009_requires_existing_file_for_update"),
        "Update File 'missing.txt' (patch line 2): file not found"
    );
    assert_eq!(
        message("012_delete_directory_fails"),
        "Delete File 'dir' (patch line 2): is a directory, not a file"
    );
}
