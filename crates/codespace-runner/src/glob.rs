//! Glob matching over workspace-relative paths with real glob semantics: `*` and `?` stay
//! within one path component, `**` crosses components, `[...]` classes and `{a,b}`
//! alternatives.

use globset::{Glob, GlobBuilder, GlobMatcher};

use crate::RunnerError;

/// A compiled glob. Matching is byte-exact and case-sensitive.
#[derive(Debug, Clone)]
pub struct PathGlob {
    matcher: GlobMatcher,
}

impl PathGlob {
    pub fn new(pattern: &str) -> Result<PathGlob, RunnerError> {
        let invalid =
            |reason: String| RunnerError::InvalidGlob { glob: pattern.to_owned(), reason };
        if pattern.is_empty() {
            return Err(invalid("empty glob".to_owned()));
        }
        if pattern.starts_with('/') {
            return Err(invalid(
                "globs match workspace-relative paths; drop the leading '/'".to_owned(),
            ));
        }
        let glob: Glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .empty_alternates(true)
            .build()
            .map_err(|e| invalid(e.kind().to_string()))?;
        Ok(PathGlob { matcher: glob.compile_matcher() })
    }

    pub fn is_match(&self, path: &str) -> bool {
        self.matcher.is_match(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(glob: &str, path: &str) -> bool {
        PathGlob::new(glob).unwrap().is_match(path)
    }

    #[test]
    fn semantics() {
        assert!(m("*.rs", "main.rs"));
        assert!(!m("*.rs", "src/main.rs"), "* must not cross '/'");
        assert!(m("**/*.rs", "src/main.rs"));
        assert!(m("**/*.rs", "main.rs"));
        assert!(m("src/**", "src/a/b/c.txt"));
        assert!(m("src/?.rs", "src/a.rs"));
        assert!(!m("src/?.rs", "src/ab.rs"));
        assert!(m("src/[ab].rs", "src/b.rs"));
        assert!(!m("src/[ab].rs", "src/c.rs"));
        assert!(m("src/[!ab].rs", "src/c.rs"));
        assert!(m("**/*.{rs,toml}", "x/Cargo.toml"));
        assert!(!m("**/*.{rs,toml}", "x/Cargo.lock"));
        assert!(m("README.md", "README.md"));
        assert!(!m("README.md", "docs/README.md"));
        assert!(!m("*.RS", "main.rs"), "case-sensitive");
    }

    #[test]
    fn bad_globs_are_refused() {
        for g in ["", "/abs/*.rs", "src/[ab.rs", "{a,b"] {
            assert!(matches!(PathGlob::new(g), Err(RunnerError::InvalidGlob { .. })), "{g}");
        }
    }
}
