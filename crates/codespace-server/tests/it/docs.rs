//! The docs stay true: every error code is documented with its meaning and next action, and
//! every architecture invariant names checks that exist.

use codespace_protocol::ErrorCode;

#[test]
fn readme_documents_every_error_code() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    for code in ErrorCode::ALL {
        let row = format!("| `{}` | {} | {} |", code.as_str(), code.meaning(), code.next_action());
        assert!(readme.contains(&row), "README error table lacks or misstates:\n{row}");
    }
    let rows = readme
        .lines()
        .filter(|l| l.starts_with("| `") && l.chars().filter(|c| *c == '|').count() == 4);
    let documented: Vec<&str> = rows
        .filter_map(|l| l.split('`').nth(1))
        .filter(|c| c.chars().all(|ch| ch.is_ascii_uppercase() || ch == '_'))
        .collect();
    assert_eq!(
        documented.len(),
        ErrorCode::ALL.len(),
        "README documents codes the server does not have: {documented:?}"
    );
}

/// Every `fn` defined in the workspace's Rust sources, by name.
fn defined_functions(dir: &std::path::Path, names: &mut std::collections::BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            defined_functions(&path, names);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            for rest in text.split("fn ").skip(1) {
                let name: String =
                    rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                names.insert(name);
            }
        }
    }
}

#[test]
fn every_architecture_invariant_names_checks_that_exist() {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut functions = std::collections::BTreeSet::new();
    defined_functions(&root.join("crates"), &mut functions);
    let invariants: Vec<&str> =
        doc.split("\n\n").filter(|p| p.starts_with("Architecture Invariant:")).collect();
    assert!(invariants.len() >= 10, "ARCHITECTURE.md lost its invariants: {}", invariants.len());
    for invariant in invariants {
        let (_, checks) = invariant
            .split_once("Checked by:")
            .unwrap_or_else(|| panic!("an invariant names no check:\n{invariant}"));
        let mut named = 0;
        for quoted in checks.split('`').skip(1).step_by(2) {
            let is_test_name = quoted.matches('_').count() >= 2
                && quoted.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            if is_test_name {
                assert!(
                    functions.contains(quoted),
                    "ARCHITECTURE.md names a missing test: {quoted}"
                );
                named += 1;
            } else if quoted.contains('/') && !quoted.contains(' ') && !quoted.contains("::") {
                assert!(
                    root.join(quoted).exists(),
                    "ARCHITECTURE.md names a missing file: {quoted}"
                );
                named += 1;
            }
        }
        assert!(named > 0, "an invariant's checks name no test or file:\n{invariant}");
    }
}
