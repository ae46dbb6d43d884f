//! Test support: an in-memory tree (files + directories) loaded from disk, a `lookup` over
//! it that checks the once-per-path contract, and applying a plan to it.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::convert::Infallible;
use std::path::{Path, PathBuf};

use codespace_patch::{Entry, Plan, PlanError, parse, plan};
use codespace_types::ChangeKind;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Tree {
    pub(crate) files: BTreeMap<String, Vec<u8>>,
    pub(crate) dirs: BTreeSet<String>,
}

impl Tree {
    /// Files given inline; directories are their ancestors.
    pub(crate) fn of(files: &[(&str, &str)]) -> Self {
        let mut tree = Self::default();
        for (p, c) in files {
            tree.insert_file(p, c.as_bytes().to_vec());
        }
        tree
    }

    /// Loads `dir` recursively; a missing `dir` is the empty tree.
    pub(crate) fn load(dir: &Path) -> Self {
        let mut tree = Self::default();
        if dir.exists() {
            walk(dir, "", &mut tree);
        }
        tree
    }

    pub(crate) fn insert_file(&mut self, path: &str, content: Vec<u8>) {
        let mut i = 0;
        while let Some(off) = path[i..].find('/') {
            self.dirs.insert(path[..i + off].to_string());
            i += off + 1;
        }
        self.files.insert(path.to_string(), content);
    }

    pub(crate) fn entry(&self, path: &str) -> Entry {
        if let Some(c) = self.files.get(path) {
            Entry::File(c.clone())
        } else if self.dirs.contains(path) {
            Entry::Directory
        } else {
            Entry::Absent
        }
    }

    /// Writes the plan the way the gateway will: every change independently, parents created.
    pub(crate) fn apply(&mut self, plan: &Plan) {
        for c in &plan.changes {
            assert_eq!(c.before.as_ref(), self.files.get(&c.path), "before of {}", c.path);
            match &c.after {
                Some(after) => self.insert_file(&c.path, after.clone()),
                None => {
                    self.files.remove(&c.path);
                }
            }
        }
    }
}

fn walk(dir: &Path, prefix: &str, tree: &mut Tree) {
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        let rel = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
        if p.is_dir() {
            tree.dirs.insert(rel.clone());
            walk(&p, &rel, tree);
        } else {
            tree.files.insert(rel, std::fs::read(&p).unwrap());
        }
    }
}

/// What happened to a patch.
#[derive(Debug)]
pub(crate) enum Outcome {
    Applied(Tree),
    ParseError(codespace_patch::PatchError),
    PlanError(PlanError<Infallible>),
}

/// Parses and plans `patch` over `tree`, checks the plan's invariants, and applies it to a
/// copy of the tree.
pub(crate) fn run(tree: &Tree, patch: &str) -> Outcome {
    let parsed = match parse(patch) {
        Ok(p) => p,
        Err(e) => return Outcome::ParseError(e),
    };
    let mut asked = HashSet::new();
    let result = plan(&parsed, |p| {
        assert!(asked.insert(p.to_string()), "lookup called twice for {p}");
        Ok(tree.entry(p))
    });
    match result {
        Ok(plan) => {
            check_plan(&plan);
            let mut after = tree.clone();
            after.apply(&plan);
            Outcome::Applied(after)
        }
        Err(e) => Outcome::PlanError(e),
    }
}

/// Invariants every successful plan must satisfy.
pub(crate) fn check_plan(plan: &Plan) {
    let mut seen = HashSet::new();
    for c in &plan.changes {
        assert!(seen.insert(&c.path), "two changes for {}", c.path);
        match c.kind {
            ChangeKind::Add => assert!(c.before.is_none() && c.after.is_some()),
            ChangeKind::Update => assert!(c.before.is_some() && c.after.is_some()),
            ChangeKind::Delete => assert!(c.before.is_some() && c.after.is_none()),
            ChangeKind::Move => {
                assert!(c.after.is_some());
                let from = c.move_from.as_deref().unwrap();
                assert!(
                    plan.changes.iter().any(|d| d.path == from && d.kind == ChangeKind::Delete),
                    "move source {from} is not deleted"
                );
            }
        }
        assert_eq!(c.kind == ChangeKind::Move, c.move_from.is_some());
    }
}

/// `patch` wrapped in the V4A envelope.
pub(crate) fn wrap(body: &str) -> String {
    format!("*** Begin Patch\n{body}*** End Patch\n")
}
