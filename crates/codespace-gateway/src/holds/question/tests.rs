//! Unit tests of `holds::question`: the patch as the person reads it.

use super::*;

#[test]
fn a_short_patch_is_shown_whole_with_hidden_characters_written_out() {
    let text =
        "*** Begin Patch\n*** Update File: a\u{202E}b\n@@\n top\n+x\u{1b}[31m\n*** End Patch\n";
    let shown = patch_excerpt(text, "appr-1");
    assert_eq!(
        shown,
        "*** Begin Patch\n*** Update File: a\\u{202E}b\n@@\n top\n+x\\u{001B}[31m\n*** End Patch"
    );
}

#[test]
fn a_long_patch_shows_its_first_lines_and_counts_the_rest() {
    let mut text = String::from("*** Begin Patch\n*** Add File: big.txt\n");
    for i in 0..1000 {
        text.push_str(&format!("+line {i}\n"));
    }
    text.push_str("*** End Patch\n");
    let shown = patch_excerpt(&text, "appr-1");
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), SHOWN_PATCH_LINES + 1, "{shown}");
    assert_eq!(lines[2], "+line 0");
    assert_eq!(
        lines[SHOWN_PATCH_LINES],
        "... and 803 more line(s) of the patch, not shown (`codespace approvals show appr-1` prints it all)"
    );
}

#[test]
fn a_very_long_line_is_cut_and_the_whole_is_bounded() {
    let long = "x".repeat(100_000);
    let text = format!("*** Begin Patch\n*** Add File: one.txt\n+{long}\n*** End Patch\n");
    let shown = patch_excerpt(&text, "appr-1");
    assert!(shown.contains("... (99601 more characters)"), "{}", &shown[..600]);
    assert!(shown.chars().count() < 2_000, "{}", shown.len());
    let many = format!("*** Begin Patch\n{}", format!("+{}\n", "y".repeat(399)).repeat(150));
    let shown = patch_excerpt(&many, "appr-1");
    assert!(shown.len() <= SHOWN_PATCH_CHARS + 200, "{}", shown.len());
    assert!(shown.ends_with("prints it all)"), "{}", &shown[shown.len() - 200..]);
}
