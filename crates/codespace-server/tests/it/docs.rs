//! The README stays true: every error code is documented with its meaning and next action.

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
