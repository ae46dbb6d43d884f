//! House rules read from the sources, beside the architecture test: every Rust file of the
//! workspace's crates opens with `//!`, every lint lift gives its reason, unit tests sit in
//! one form (`#[cfg(test)] mod tests;` with the tests in a sibling `tests.rs`), and no
//! shipped target reads a test fault variable.

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

/// Every `.rs` file of every crate: sources, tests, benches and examples.
fn all_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for krate in std::fs::read_dir(crates_dir()).unwrap() {
        let krate = krate.unwrap().path();
        for dir in ["src", "tests", "benches", "examples"] {
            out.extend(rust_files(&krate.join(dir)));
        }
        let build = krate.join("build.rs");
        if build.is_file() {
            out.push(build);
        }
    }
    out
}

#[test]
fn every_rust_file_opens_with_a_module_doc() {
    let missing: Vec<String> = all_files()
        .into_iter()
        .filter(|p| !std::fs::read_to_string(p).unwrap().starts_with("//!"))
        .map(|p| p.display().to_string())
        .collect();
    assert!(missing.is_empty(), "files that do not open with a `//!` line: {missing:#?}");
}

/// Every `allow` or `expect` attribute, outer or inner, names why the lint is lifted: the
/// `reason = "..."` inside it (an attribute over several lines is read to its end).
#[test]
fn every_lint_lift_gives_its_reason() {
    let mut missing = Vec::new();
    for path in all_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let attr = line.trim_start().trim_start_matches("#!").trim_start_matches('#');
            let lifts = line.trim_start().starts_with('#')
                && (attr.starts_with("[allow(") || attr.starts_with("[expect("));
            if !lifts {
                continue;
            }
            // The attribute runs to the first line that closes it.
            let end = (i..lines.len()).find(|&j| lines[j].trim_end().ends_with(")]"));
            let whole = lines[i..=end.unwrap_or(i)].join(" ");
            if !whole.contains("reason = \"") {
                missing.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(missing.is_empty(), "lint lifts without `reason = \"...\"`: {missing:#?}");
}

/// Unit tests have one form: `#[cfg(test)] mod tests;` in the module, the tests in its
/// sibling `tests.rs` (`foo.rs` with `foo/tests.rs`); no module of tests written inline.
#[test]
fn unit_tests_sit_in_a_sibling_file() {
    let mut inline = Vec::new();
    for path in shipped_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, pair) in lines.windows(2).enumerate() {
            let gated = pair[0].trim() == "#[cfg(test)]";
            let module = pair[1]
                .trim_start()
                .strip_prefix("mod ")
                .or_else(|| pair[1].trim_start().strip_prefix("pub(crate) mod "));
            if gated && module.is_some_and(|rest| !rest.trim_end().ends_with(';')) {
                inline.push(format!("{}:{}: {}", path.display(), i + 2, pair[1].trim()));
            }
        }
    }
    assert!(
        inline.is_empty(),
        "inline test modules (move them to a sibling tests.rs): {inline:#?}"
    );
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
