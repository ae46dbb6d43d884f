//! House rules read from the sources, beside the architecture test: what every Rust file of
//! the workspace's crates must (or must not) say.

use std::path::{Path, PathBuf};

/// The workspace's `crates/` directory.
fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Every `.rs` file beneath `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Every `.rs` file of a target a user can run or link (each crate's `src/`, `build.rs`).
fn shipped_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for krate in std::fs::read_dir(crates_dir()).unwrap() {
        let krate = krate.unwrap().path();
        out.extend(rust_files(&krate.join("src")));
        let build = krate.join("build.rs");
        if build.is_file() {
            out.push(build);
        }
    }
    out
}

/// A test fault variable is read only by a test-only target (tests, examples, benches): no
/// library or binary, however it was built, obeys one.
#[test]
fn no_test_fault_variable_is_read_outside_test_only_targets() {
    let offenders: Vec<String> = shipped_files()
        .into_iter()
        .filter(|p| std::fs::read_to_string(p).unwrap().contains("CODESPACE_TEST_"))
        .map(|p| p.display().to_string())
        .collect();
    assert!(offenders.is_empty(), "CODESPACE_TEST_ named outside test-only targets: {offenders:?}");
}
