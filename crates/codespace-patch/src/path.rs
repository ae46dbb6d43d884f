//! Lexical normalisation of patch paths, so two spellings of one path share one overlay entry.

use codespace_types::{LexicalRefusal, normalise_relative};

/// `a//./b/../c/` → `a/c`. Refuses what cannot name a file beneath the root.
///
/// `..` pops a segment lexically, as Codex joins paths; the caller still checks the result
/// (symlinks, special files) in its `lookup`.
pub fn normalise(raw: &str) -> Result<String, &'static str> {
    normalise_relative(raw).map_err(|refusal| match refusal {
        LexicalRefusal::Nul => "the path contains a NUL character",
        LexicalRefusal::Absolute => {
            "absolute paths are not allowed; use a path relative to the workspace root"
        }
        LexicalRefusal::ParentEscape => "'..' leaves the workspace root",
        LexicalRefusal::Root => "the path names the workspace root, not a file",
    })
}

/// Proper ancestors of a normalised path, outermost first: `a/b/c` → `a`, `a/b`.
pub(crate) fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').map(move |(i, _)| &path[..i])
}

#[cfg(test)]
mod tests;
