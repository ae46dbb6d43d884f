//! Glob matching over workspace-relative paths with real glob semantics: `*` and `?` stay
//! within one path component, `**` crosses components, `[...]` classes and `{a,b}`
//! alternatives. Anchoring follows `.gitignore` and `rg --glob`: a glob without `/` matches
//! the file name at any depth; a leading `/` or `./` anchors it at the root, as does a `/`
//! anywhere else.

use globset::{Glob, GlobBuilder, GlobMatcher};

use crate::FilesError;

/// A compiled glob. Matching is byte-exact and case-sensitive.
#[derive(Debug, Clone)]
pub struct PathGlob {
    matcher: GlobMatcher,
    /// Matched against the file name only (the glob had no `/`).
    name_only: bool,
}

impl PathGlob {
    pub fn new(pattern: &str) -> Result<PathGlob, FilesError> {
        let invalid = |reason: String| FilesError::InvalidGlob { glob: pattern.to_owned(), reason };
        let anchored = pattern.strip_prefix("./").or_else(|| pattern.strip_prefix('/'));
        let body = anchored.unwrap_or(pattern);
        if body.is_empty() {
            return Err(invalid("empty glob".to_owned()));
        }
        if body.starts_with('/') {
            return Err(invalid(
                "globs match workspace-relative paths; use one leading '/'".to_owned(),
            ));
        }
        let name_only = anchored.is_none() && !body.contains('/');
        let glob: Glob = GlobBuilder::new(body)
            .literal_separator(true)
            .backslash_escape(true)
            .empty_alternates(true)
            .build()
            .map_err(|e| invalid(e.kind().to_string()))?;
        Ok(PathGlob { matcher: glob.compile_matcher(), name_only })
    }

    /// `path` is workspace-relative and `/`-separated.
    pub fn is_match(&self, path: &str) -> bool {
        if self.name_only {
            let name = path.rsplit_once('/').map_or(path, |(_, name)| name);
            self.matcher.is_match(name)
        } else {
            self.matcher.is_match(path)
        }
    }
}

#[cfg(test)]
mod tests;
