//! `find`: the bounded no-follow walk filtered by a glob, ignored paths left out unless
//! asked for.

use codespace_fs::{Root, WalkLimits};

use crate::{PathGlob, RunnerError};

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
) -> Result<FindOutcome, RunnerError> {
    let walk = crate::ignores::walk(root, limits, include_ignored)?;
    let mut paths = walk.files;
    if let Some(glob) = glob {
        paths.retain(|p| glob.is_match(p));
    }
    Ok(FindOutcome { paths, incomplete: walk.incomplete })
}
