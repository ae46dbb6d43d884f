//! The ignore rules `find` and `grep` apply by default: `.gitignore` and `.ignore` in every
//! directory, `.git/info/exclude` at the root, and `.git` itself, as a [`WalkFilter`] so
//! they are applied inside the fs crate's bounded no-follow walk (an ignored directory is
//! never opened). Patterns are parsed and matched by the `ignore` crate's gitignore
//! matcher; its walker is not used, so every rule file is read beneath the root descriptor.
//!
//! Precedence follows ripgrep: a `.ignore` match (at any level) beats a `.gitignore` match,
//! which beats `.git/info/exclude`; within one kind the deepest directory decides, and
//! within one file the last matching line (so `!keep` re-includes). The global git excludes
//! file is not read: it lies outside the workspace.

use std::cell::Cell;
use std::rc::Rc;

use codespace_fs::{DirFiles, Root, Walk, WalkFilter, WalkLimits};
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::FilesError;

/// Largest rule file read; a longer one contributes its lines up to here (more files are
/// then listed, never fewer).
const MAX_RULE_FILE_BYTES: usize = 256 * 1024;
/// Rule bytes read in one walk, all files together: bounds the matcher memory and build
/// time a tree full of rule files can cost. Files past it are not read.
const MAX_RULE_BYTES_PER_WALK: usize = 4 * 1024 * 1024;

/// The rules of one directory that has rule files, linked to the nearest ancestor that has.
#[derive(Debug)]
pub(crate) struct Rules {
    /// Length of the directory's path plus its `/` (0 for the root): the rules match the
    /// path relative to their directory.
    prefix_len: usize,
    ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
    parent: Option<Rc<Rules>>,
}

/// The default `find`/`grep` filter. Not `Send`: one walk, one thread.
#[derive(Debug, Default)]
pub(crate) struct IgnoreRules {
    /// `.git/info/exclude` of the root, matched against the whole path.
    exclude: Option<Gitignore>,
    /// Rule bytes read so far in this walk.
    read: Cell<usize>,
}

impl IgnoreRules {
    /// Reads and compiles one rule file in `files`, within the per-walk budget.
    fn load(&self, files: &DirFiles<'_>, rel: &str) -> Option<Gitignore> {
        let room = MAX_RULE_BYTES_PER_WALK.saturating_sub(self.read.get());
        let file = files.read(rel, MAX_RULE_FILE_BYTES.min(room))?;
        self.read.set(self.read.get() + file.bytes.len());
        let mut text = String::from_utf8_lossy(&file.bytes).into_owned();
        if file.truncated {
            // The last line may be cut mid-pattern: drop it rather than guess.
            text.truncate(text.rfind('\n').unwrap_or(0));
        }
        compile(&text)
    }
}

/// One rule file's text as a matcher over paths relative to its directory; `None` when it
/// has no rules. A line the matcher cannot parse is skipped, as git skips it.
fn compile(text: &str) -> Option<Gitignore> {
    let mut builder = GitignoreBuilder::new(".");
    for line in text.lines() {
        // A bad pattern (an unclosed class...) is skipped; the others still apply.
        let _skipped = builder.add_line(None, line);
    }
    builder.build().ok().filter(|g| !g.is_empty())
}

impl WalkFilter for IgnoreRules {
    type Dir = Option<Rc<Rules>>;

    fn enter(&mut self, parent: Option<&Self::Dir>, path: &str, files: &DirFiles<'_>) -> Self::Dir {
        if path.is_empty() {
            // The repository's own exclude file; nested repositories' are not read.
            self.exclude = self.load(files, ".git/info/exclude");
        }
        let parent = parent.cloned().flatten();
        let ignore = self.load(files, ".ignore");
        let gitignore = self.load(files, ".gitignore");
        if ignore.is_none() && gitignore.is_none() {
            return parent;
        }
        let prefix_len = if path.is_empty() { 0 } else { path.len() + 1 };
        Some(Rc::new(Rules { prefix_len, ignore, gitignore, parent }))
    }

    fn skip(&self, dir: &Self::Dir, path: &str, is_dir: bool) -> bool {
        let name = path.rsplit_once('/').map_or(path, |(_, name)| name);
        if name == ".git" {
            return true;
        }
        let chain = || std::iter::successors(dir.as_ref(), |r| r.parent.as_ref());
        let kinds: [fn(&Rules) -> Option<&Gitignore>; 2] =
            [|r| r.ignore.as_ref(), |r| r.gitignore.as_ref()];
        for pick in kinds {
            for rules in chain() {
                let Some(matcher) = pick(rules) else { continue };
                match matcher.matched(&path[rules.prefix_len..], is_dir) {
                    Match::Ignore(_) => return true,
                    Match::Whitelist(_) => return false,
                    Match::None => {}
                }
            }
        }
        self.exclude.as_ref().is_some_and(|g| g.matched(path, is_dir).is_ignore())
    }
}

/// The bounded no-follow walk `find` and `grep` list from, leaving out ignored paths
/// unless `include_ignored`.
pub fn walk(root: &Root, limits: &WalkLimits, include_ignored: bool) -> Result<Walk, FilesError> {
    let walk = if include_ignored {
        root.walk(limits)?
    } else {
        root.walk_filtered(limits, &mut IgnoreRules::default())?
    };
    Ok(walk)
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "tests build their fixtures and inspect results on the host filesystem"
)]
mod tests;
