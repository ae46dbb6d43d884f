//! Lexical normalisation of patch paths, so two spellings of one path share one overlay entry.

/// `a//./b/../c/` → `a/c`. Refuses what cannot name a file beneath the root.
///
/// `..` pops a segment lexically, as Codex joins paths; the caller still checks the result
/// (symlinks, special files) in its `lookup`.
pub fn normalise(raw: &str) -> Result<String, &'static str> {
    if raw.contains('\0') {
        return Err("the path contains a NUL character");
    }
    if raw.starts_with('/') {
        return Err("absolute paths are not allowed; use a path relative to the workspace root");
    }
    let mut segments: Vec<&str> = Vec::new();
    for seg in raw.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if segments.pop().is_none() {
                    return Err("'..' leaves the workspace root");
                }
            }
            s => segments.push(s),
        }
    }
    if segments.is_empty() {
        return Err("the path names the workspace root, not a file");
    }
    Ok(segments.join("/"))
}

/// Proper ancestors of a normalised path, outermost first: `a/b/c` → `a`, `a/b`.
pub(crate) fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').map(move |(i, _)| &path[..i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises() {
        assert_eq!(normalise("a.txt").unwrap(), "a.txt");
        assert_eq!(normalise("./a//b/./c/").unwrap(), "a/b/c");
        assert_eq!(normalise("a/../b").unwrap(), "b");
        assert_eq!(normalise(" a /b").unwrap(), " a /b");
        assert!(normalise("../a").is_err());
        assert!(normalise("a/../../a").is_err());
        assert!(normalise("/etc/passwd").is_err());
        assert!(normalise(".").is_err());
        assert!(normalise("a\0b").is_err());
    }

    #[test]
    fn lists_ancestors() {
        assert_eq!(ancestors("a/b/c").collect::<Vec<_>>(), vec!["a", "a/b"]);
        assert_eq!(ancestors("a").count(), 0);
    }
}
