//! Unit tests of `update`.

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
    UpdateChunk { context: None, lines, end_of_file: false, line: 1, body_line: 1 }
}

#[test]
fn split_keeps_each_terminator() {
    let l = split_lines("a\r\nb\rc\nd");
    let got: Vec<_> = l.iter().map(|l| (l.text, l.eol)).collect();
    assert_eq!(
        got,
        vec![("a", Some(Eol::CrLf)), ("b", Some(Eol::Cr)), ("c", Some(Eol::Lf)), ("d", None)]
    );
    assert!(split_lines("").is_empty());
    assert_eq!(split_lines("\r\r\n").len(), 2);
}

#[test]
fn blank_trailing_line_is_kept() {
    // Legacy mode would lose one of the trailing blank lines.
    assert_eq!(apply_chunks("a\n\n", &[chunk(&["-a", "+b"])]).unwrap(), "b\n\n");
}

#[test]
fn emptied_file_is_empty() {
    assert_eq!(apply_chunks("a\n", &[chunk(&["-a"])]).unwrap(), "");
}

#[test]
fn trailing_blank_retry_keeps_inserted_blank() {
    // ` a`, blank context, `+b`: the retry drops the blank from the pattern only.
    let c = chunk(&[" a", " ", "+b"]);
    assert_eq!(apply_chunks("a", &[c]).unwrap(), "a\n\nb\n");
}

#[test]
fn failures_name_the_chunk() {
    let mut c = chunk(&["-zz"]);
    assert_eq!(
        apply_chunks("a\n", &[chunk(&["-a", "+b"]), c.clone()]),
        Err(ChunkFailure::Lines { chunk: 1, nearest: None })
    );
    c.context = Some("nope".into());
    assert_eq!(apply_chunks("a\n", &[c]), Err(ChunkFailure::Context { chunk: 0, nearest: None }));
}
