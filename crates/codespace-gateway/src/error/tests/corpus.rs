//! The corpus of bad patches (`tests/refusals.json`) through the engine: each is parsed and
//! planned in memory and its refusal mapped to the wire as `apply_patch` maps it, with its
//! code, reason, patch line, chunk, path and nearest line asserted.

use std::collections::BTreeMap;

use codespace_files::{LookupError, PlanFailure};
use codespace_patch::Entry;
use codespace_protocol::ErrorBody;
use codespace_runner::FsError;
use serde_json::{Value, json};

use super::GatewayError;

const CORPUS: &str = include_str!("../../../tests/refusals.json");

/// The corpus's tree: its files, their directories, `data.bin` and the `link.txt` symlink.
fn lookup(files: &BTreeMap<String, Vec<u8>>, path: &str) -> Result<Entry, LookupError> {
    if path == "link.txt" {
        return Err(LookupError::Fs(FsError::SymlinkRejected { path: path.to_owned() }));
    }
    if let Some(bytes) = files.get(path) {
        return Ok(Entry::File(bytes.clone()));
    }
    let dir = format!("{path}/");
    Ok(if files.keys().any(|f| f.starts_with(&dir)) { Entry::Directory } else { Entry::Absent })
}

/// The refusal `apply_patch` would answer for `patch` over `files`.
fn refusal(files: &BTreeMap<String, Vec<u8>>, patch: &str) -> ErrorBody {
    // Names a person could be misled by are refused first, as `apply_patch` does.
    if let Err(e) = crate::holds::check_created_names_in(patch) {
        return GatewayError::Trust(e).to_body();
    }
    let failure = match codespace_patch::parse(patch) {
        Err(e) => PlanFailure::Parse(e),
        Ok(parsed) => match codespace_patch::plan(&parsed, |p| lookup(files, p)) {
            Err(e) => PlanFailure::Plan(e),
            Ok(plan) => {
                panic!("applies: {:?}", plan.changes.iter().map(|c| &c.path).collect::<Vec<_>>())
            }
        },
    };
    GatewayError::Patch(failure).to_body()
}

/// The fields of a refusal a corpus case pins, in the corpus's own form.
pub(crate) fn pinned(case: &Value, body: &Value) -> Vec<(String, Value, Value)> {
    let mut checks = vec![];
    for field in ["code", "reason", "patch_line", "chunk", "path"] {
        if field == "patch_line" || case.get(field).is_some() {
            let want = case[field].clone();
            checks.push((field.to_owned(), want, body[field].clone()));
        }
    }
    if case["nearest"].is_null() {
        checks.push(("nearest".to_owned(), Value::Null, body["nearest"].clone()));
        return checks;
    }
    let want = case["nearest"].as_object().expect("nearest is null or an object");
    for (k, v) in want {
        checks.push((format!("nearest.{k}"), v.clone(), body["nearest"][k].clone()));
    }
    checks
}

pub(crate) fn corpus() -> (BTreeMap<String, Vec<u8>>, Vec<Value>) {
    let doc: Value = serde_json::from_str(CORPUS).unwrap();
    let mut files: BTreeMap<String, Vec<u8>> = doc["files"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().as_bytes().to_vec()))
        .collect();
    files.insert("data.bin".to_owned(), vec![0xff, 0xfe, 0x00]);
    (files, doc["cases"].as_array().unwrap().clone())
}

#[test]
fn every_bad_patch_of_the_corpus_says_why_and_where() {
    let (files, cases) = corpus();
    assert!(cases.len() >= 30, "the corpus has {} cases", cases.len());
    let (mut with_nearest, mut context) = (0, 0);
    for case in &cases {
        let body = refusal(&files, case["patch"].as_str().unwrap());
        assert!(!body.message.is_empty());
        let body = serde_json::to_value(&body).unwrap();
        for (field, want, got) in pinned(case, &body) {
            assert_eq!(got, want, "{}: {field} in {body:#}", case["name"]);
        }
        if case["reason"] == json!("context_not_found") {
            context += 1;
            with_nearest += usize::from(!body["nearest"].is_null());
        }
    }
    let share = with_nearest * 100 / cases.len();
    eprintln!(
        "corpus: {} bad patches, {context} context_not_found, {with_nearest} with a nearest line ({share}% of all)",
        cases.len()
    );
}
