//! A small in-memory tree for fuzzing `parse` + `plan`, shared (by `#[path]`) with the cargo-fuzz
//! target `fuzz/fuzz_targets/parse_plan.rs`.
//!
//! Besides a few fixed entries, every file an Update names is synthesised from the patch's own
//! context and `-` lines (with line endings picked by a hash of the path), so that fuzzed
//! patches reach the matcher and the rebuild, not only "file not found".

use std::collections::{BTreeMap, HashSet};
use std::convert::Infallible;

use codespace_patch::{Entry, Hunk, Patch, normalise_path, parse, plan};
use codespace_types::ChangeKind;

/// How far an input got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reached {
    ParseError,
    PlanError,
    Planned,
}

/// Parses and plans `text`; panics only on a broken invariant (never on a refused patch).
pub(crate) fn run(text: &str) -> Reached {
    let Ok(patch) = parse(text) else { return Reached::ParseError };
    let tree = tree_for(&patch);
    let mut asked = HashSet::new();
    let result = plan(&patch, |p| {
        assert!(asked.insert(p.to_string()), "lookup called twice for {p}");
        Ok::<_, Infallible>(lookup(&tree, p))
    });
    let Ok(plan) = result else { return Reached::PlanError };
    let mut paths = HashSet::new();
    for c in &plan.changes {
        assert!(paths.insert(c.path.as_str()), "two changes for {}", c.path);
        assert!(!c.path.is_empty() && !c.path.starts_with('/') && !c.path.ends_with('/'));
        assert!(c.path.split('/').all(|s| !s.is_empty() && s != "." && s != ".."), "{}", c.path);
        let before = match lookup(&tree, &c.path) {
            Entry::File(b) => Some(b),
            Entry::Absent | Entry::Directory => None,
        };
        assert_eq!(c.before, before, "before of {}", c.path);
        let consistent = match c.kind {
            ChangeKind::Add => c.before.is_none() && c.after.is_some(),
            ChangeKind::Update => c.before.is_some() && c.after.is_some(),
            ChangeKind::Delete => c.before.is_some() && c.after.is_none(),
            ChangeKind::Move => c.after.is_some() && c.move_from.is_some(),
        };
        assert!(consistent, "inconsistent change {c:?}");
        if let Some(after) = &c.after {
            // Updated files always end with a terminator; Add contents are LF lines.
            assert!(after.is_empty() || after.ends_with(b"\n") || after.ends_with(b"\r"));
        }
    }
    Reached::Planned
}

fn lookup(tree: &BTreeMap<String, Entry>, path: &str) -> Entry {
    match tree.get(path) {
        Some(e) => e.clone(),
        None if tree.keys().any(|k| k.starts_with(path) && k[path.len()..].starts_with('/')) => {
            Entry::Directory
        }
        None => Entry::Absent,
    }
}

fn hash(s: &str) -> u64 {
    // FNV-1a: stable across runs, no dependency.
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

pub(crate) fn tree_for(patch: &Patch) -> BTreeMap<String, Entry> {
    let mut tree = BTreeMap::new();
    tree.insert("dir/a.txt".to_string(), Entry::File(b"a\n".to_vec()));
    tree.insert("bin".to_string(), Entry::File(vec![0xff, 0xfe, b'\n']));
    tree.insert("empty".to_string(), Entry::File(Vec::new()));
    tree.insert("crlf.txt".to_string(), Entry::File(b"one\r\ntwo\r\n".to_vec()));
    for hunk in &patch.hunks {
        let Hunk::Update { path, chunks, .. } = hunk else { continue };
        let Ok(p) = normalise_path(path) else { continue };
        let h = hash(&p);
        let nested = tree
            .keys()
            .any(|k: &String| k.starts_with(&format!("{p}/")) || p.starts_with(&format!("{k}/")));
        if nested || tree.contains_key(&p) || h.is_multiple_of(7) {
            continue; // keep the tree consistent, and leave some targets missing
        }
        let eol = ["\n", "\r\n", "\r", "\n"][(h % 4) as usize];
        let mut text = String::new();
        for (i, chunk) in chunks.iter().enumerate() {
            if h & 8 != 0 {
                text.push_str(&format!("filler {i}{eol}"));
            }
            if let Some(ctx) = &chunk.context {
                text.push_str(ctx);
                text.push_str(eol);
            }
            for line in chunk.old_lines() {
                text.push_str(line);
                // Mixed endings for some files.
                text.push_str(if h & 16 != 0 && line.len() % 2 == 1 { "\r\n" } else { eol });
            }
        }
        if h & 32 != 0 && text.ends_with('\n') {
            text.pop(); // an unterminated last line
        }
        tree.insert(p, Entry::File(text.into_bytes()));
    }
    tree
}
