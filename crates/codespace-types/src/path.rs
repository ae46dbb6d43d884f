//! Lexical normalisation of workspace-relative paths: the one copy that the file tools'
//! `WorkspacePath` and the patch planner share, so both agree on what a path names.

/// Why a path cannot name a file beneath the root, decided from its text alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LexicalRefusal {
    /// The path contains a NUL byte (the kernel would truncate it).
    Nul,
    /// The path starts with `/`.
    Absolute,
    /// A `..` component would climb above the root.
    ParentEscape,
    /// The path normalises to the root itself (``, `.`, `a/..`).
    Root,
}

/// `a//./b/../c/` → `a/c`: empty and `.` components dropped, `..` popping one component
/// (as Codex joins paths; symlinks are refused later, beneath the root descriptor, so the
/// lexical answer is the kernel's).
pub fn normalise_relative(raw: &str) -> Result<String, LexicalRefusal> {
    if raw.as_bytes().contains(&0) {
        return Err(LexicalRefusal::Nul);
    }
    if raw.starts_with('/') {
        return Err(LexicalRefusal::Absolute);
    }
    let mut segments: Vec<&str> = Vec::new();
    for segment in raw.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                if segments.pop().is_none() {
                    return Err(LexicalRefusal::ParentEscape);
                }
            }
            name => segments.push(name),
        }
    }
    if segments.is_empty() {
        return Err(LexicalRefusal::Root);
    }
    Ok(segments.join("/"))
}

#[cfg(test)]
mod tests;
