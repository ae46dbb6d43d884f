//! `find`: the bounded no-follow walk filtered by a glob, ignored paths left out unless
//! asked for.

use codespace_fs::{Root, Walk, WalkLimits};

use crate::{FilesError, PathGlob};

/// Every matching regular file, sorted by bytes, and whether the walk was cut short.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindOutcome {
    pub paths: Vec<String>,
    pub incomplete: bool,
}

pub fn find(
    root: &Root,
    glob: Option<&PathGlob>,
    limits: &WalkLimits,
    include_ignored: bool,
) -> Result<FindOutcome, FilesError> {
    let walk = crate::ignores::walk(root, limits, include_ignored)?;
    Ok(find_in(&walk, glob))
}

/// [`find`] over a walk the caller supplies (a cached one, say).
pub fn find_in(walk: &Walk, glob: Option<&PathGlob>) -> FindOutcome {
    let paths = walk.files.iter().filter(|p| glob.is_none_or(|g| g.is_match(p))).cloned().collect();
    FindOutcome { paths, incomplete: walk.incomplete }
}
