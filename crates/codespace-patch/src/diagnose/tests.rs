//! Unit tests of the refusal diagnostics.

use super::*;
use crate::model::ChunkLine;

fn chunk(spec: &[&str]) -> UpdateChunk {
    let lines = spec
        .iter()
        .map(|s| {
            let (p, t) = s.split_at(1);
            match p {
                " " => ChunkLine::Context(t.into()),
                "-" => ChunkLine::Delete(t.into()),
                _ => ChunkLine::Add(t.into()),
            }
        })
        .collect();
    UpdateChunk { context: None, lines, end_of_file: false, line: 10, body_line: 11 }
}

#[test]
fn a_changed_token_is_named_with_its_line_and_patch_line() {
    let file = ["fn main() {", "    let x = 1;", "    println!(\"{x}\");", "}"];
    let c =
        chunk(&[" fn main() {", "-    let y = 1;", "+    let y = 2;", "     println!(\"{x}\");"]);
    let n = nearest_block(&file, &c, 0).unwrap();
    assert_eq!((n.line, n.patch_line, n.differs), (2, 12, LineDifference::Token));
    assert_eq!(n.text, "    let x = 1;");
    assert_eq!(n.token, Some(TokenChange { expected: "y".into(), found: "x".into() }));
}

#[test]
fn whitespace_inside_and_indentation_are_told_apart() {
    let file = ["a", "let  x = 1;", "b"];
    let c = chunk(&[" a", "-let x = 1;", " b"]);
    let n = nearest_block(&file, &c, 0).unwrap();
    assert_eq!((n.line, n.differs), (2, LineDifference::Whitespace));
    let file = ["a", "\tlet  x = 1;", "b"];
    let c = chunk(&[" a", "-    let x  = 1;", " b"]);
    assert_eq!(nearest_block(&file, &c, 0).unwrap().differs, LineDifference::Indentation);
}

#[test]
fn lines_found_above_the_cursor_or_off_the_end_are_a_position() {
    let file = ["x", "y", "z"];
    let c = chunk(&["-x", "+X"]);
    let n = nearest_block(&file, &c, 2).unwrap();
    assert_eq!((n.line, n.differs, n.patch_line), (1, LineDifference::Position, 11));
    let mut eof = chunk(&["-y", "+Y"]);
    eof.end_of_file = true;
    assert_eq!(nearest_block(&file, &eof, 0).unwrap().differs, LineDifference::Position);
}

#[test]
fn nothing_similar_means_no_nearest() {
    let file = ["alpha beta", "gamma"];
    let c = chunk(&["-completely different words here", "+x"]);
    assert_eq!(nearest_block(&file, &c, 0), None);
    assert_eq!(nearest_line(&file, "nothing like it", 0, 3), None);
}

#[test]
fn a_single_line_without_anchor_is_found_by_similarity() {
    let file = ["use std::io;", "fn helper(a: u32) -> u32 {", "    a + 1", "}"];
    let c = chunk(&["-fn helper(a: u64) -> u32 {", "+fn helper(a: u64) -> u64 {"]);
    let n = nearest_block(&file, &c, 0).unwrap();
    assert_eq!((n.line, n.differs), (2, LineDifference::Token));
    let n = nearest_line(&file, "fn helper(b: u32) -> u32 {", 0, 7).unwrap();
    assert_eq!((n.line, n.patch_line, n.differs), (2, 7, LineDifference::Token));
}

#[test]
fn already_applied_needs_the_new_lines_and_a_change() {
    let file = ["a", "B", "c"];
    assert!(already_applied(&file, &chunk(&[" a", "-b", "+B", " c"]), 0));
    assert!(!already_applied(&file, &chunk(&[" a", "-x", "+y", " c"]), 0));
    // A deletion already made: the context stands together.
    assert!(already_applied(&["a", "c"], &chunk(&[" a", "-b", " c"]), 0));
    // Nothing left to find, or nothing changed.
    assert!(!already_applied(&file, &chunk(&["-a"]), 0));
    assert!(!already_applied(&file, &chunk(&[" a", " B"]), 0));
    // No context and no `@@` line: a `+` line found somewhere places nothing.
    assert!(!already_applied(&file, &chunk(&["-b", "+B"]), 0));
    // Under an `@@` line, only past it.
    let mut headed = chunk(&["-b", "+B"]);
    headed.context = Some("a".into());
    assert!(already_applied(&file, &headed, 1));
    assert!(!already_applied(&file, &headed, 2));
}

#[test]
fn quotes_are_bounded_at_a_char_boundary() {
    let long = "é".repeat(400);
    let q = quote(&long);
    assert!(q.len() <= MAX_QUOTE + '…'.len_utf8());
    assert!(q.ends_with('…'));
}
