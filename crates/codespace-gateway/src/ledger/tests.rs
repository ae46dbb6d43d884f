//! The ledger's one rule, checked on the gateway's own source: async code reaches the store
//! only through [`Ledger::run`](super::Ledger::run).

use std::collections::BTreeMap;
use std::path::Path;

/// The synchronous entry points allowed to take the store directly, with their number of
/// calls: start-up recovery (`recover`, `sweep_undo`) and the operator's restore.
const OFF_THE_EXECUTOR: [(&str, usize); 2] = [("patch/operations.rs", 1), ("patch/recover.rs", 2)];

#[expect(
    clippy::disallowed_methods,
    reason = "the check reads the gateway's own source files, never a workspace path"
)]
fn sources(dir: &Path, prefix: &str, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).expect("read the source directory") {
        let path = entry.expect("a directory entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).expect("a UTF-8 name").to_owned();
        if path.is_dir() {
            sources(&path, &format!("{prefix}{name}/"), out);
        } else if name.ends_with(".rs") {
            let text = std::fs::read_to_string(&path).expect("read a source file");
            out.insert(format!("{prefix}{name}"), text);
        }
    }
}

#[test]
fn async_code_reaches_the_ledger_only_through_the_blocking_pool() {
    let mut files = BTreeMap::new();
    sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), "", &mut files);
    assert!(files.contains_key("ledger.rs"), "the walk found the sources");

    // The gateway holds the store only inside `Ledger`.
    let lib = &files["lib.rs"];
    let start = lib.find("pub struct Gateway {").expect("the Gateway struct");
    let end = start + lib[start..].find("\n}\n").expect("its end");
    assert!(!lib[start..end].contains("Store"), "Gateway holds the store outside `Ledger`");

    // The direct way to the store is taken only by the synchronous entry points.
    let found: BTreeMap<&str, usize> = files
        .iter()
        .filter(|(path, _)| !path.starts_with("ledger"))
        .map(|(path, text)| (path.as_str(), text.matches(".off_the_executor()").count()))
        .filter(|(_, n)| *n > 0)
        .collect();
    assert_eq!(
        found,
        BTreeMap::from(OFF_THE_EXECUTOR),
        "a ledger call from async code goes through `Ledger::run` (the blocking pool)"
    );
}
