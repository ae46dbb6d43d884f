//! What a refused patch says besides its code: the [`RefusalReason`] (a closed set, each
//! with its meaning and the caller's next action, the README's table made from the same
//! rows), and the file line [`Nearest`] to what a chunk expected.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::LineDifference;

/// Declares [`RefusalReason`] from one row per reason: variant, wire text, meaning and next
/// action. `ALL`, `as_str`, `meaning`, `next_action`, serde and the schema come from the rows.
macro_rules! refusal_reasons {
    ($($variant:ident = $wire:literal { meaning: $meaning:literal, next: $next:literal, })+) => {
        /// Why a patch (or the check of its files) was refused, whatever the code: the
        /// same reason may come with several codes (`file_exists` with `ADD_FILE_EXISTS` or
        /// `MOVE_DESTINATION_EXISTS`) and one code with several reasons (`INVALID_PATCH`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
        pub enum RefusalReason {
            $(#[serde(rename = $wire)] $variant,)+
        }

        impl RefusalReason {
            /// Every reason, in declaration order.
            pub const ALL: &'static [RefusalReason] = &[$(RefusalReason::$variant,)+];

            /// The wire spelling, e.g. `context_not_found`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(RefusalReason::$variant => $wire,)+
                }
            }

            /// What the reason means, in one sentence.
            pub fn meaning(self) -> &'static str {
                match self {
                    $(RefusalReason::$variant => $meaning,)+
                }
            }

            /// What the model should do next.
            pub fn next_action(self) -> &'static str {
                match self {
                    $(RefusalReason::$variant => $next,)+
                }
            }
        }
    };
}

refusal_reasons! {
    NotV4a = "not_v4a" {
        meaning: "The text is not a V4A patch: a unified diff, or no line is `*** Begin Patch`.",
        next: "Rewrite the change as V4A: `*** Begin Patch`, `*** Update File: <path>` with chunks of ' ', '-' and '+' lines, `*** End Patch`.",
    }
    Malformed = "malformed" {
        meaning: "A V4A patch with a syntax error at `patch_line`: a line that starts with none of ' ', '-', '+', an `@@` with no lines, an Update with no chunk, a missing `*** End Patch`.",
        next: "Fix the line `patch_line` names and send the patch again; no file was read.",
    }
    EmptyPatch = "empty_patch" {
        meaning: "The text is blank, or has no Add, Delete or Update operation.",
        next: "Put the operations between `*** Begin Patch` and `*** End Patch` (or send nothing when nothing should change).",
    }
    ContextNotFound = "context_not_found" {
        meaning: "A chunk's `@@` line, or its context and '-' lines, are not in the file (leading and trailing whitespace and typographic punctuation are already tolerated); `nearest` names the closest file line and what `differs`, when one is similar.",
        next: "With `nearest`: make patch line `patch_line` read exactly as `nearest.text` (`differs` says what is off; `position` means the lines are there but above an earlier chunk or not at the end of the file) and retry. Without: read the file and redo the chunk from its current text.",
    }
    AlreadyApplied = "already_applied" {
        meaning: "The change is already in the file: the chunk's context and '+' lines stand where its '-' lines would be, or the file to add already holds exactly that content.",
        next: "Do not apply it again: read the file to confirm, then drop that chunk (or the whole patch).",
    }
    FileNotFound = "file_not_found" {
        meaning: "A file to update, delete or move does not exist.",
        next: "Check the path (`find` lists files); to create a file use `*** Add File:`.",
    }
    FileExists = "file_exists" {
        meaning: "An Add File or Move to target already exists: a patch never overwrites.",
        next: "Read the file and use `*** Update File:`, or pick another destination.",
    }
    PathEscape = "path_escape" {
        meaning: "A path is absolute, empty, too long, contains NUL, or leaves the workspace.",
        next: "Use a workspace-relative path that stays inside the workspace.",
    }
    UnsafeName = "unsafe_name" {
        meaning: "A name the patch would create (an Add File path or a Move to destination) holds a control character, a line or paragraph separator or a bidirectional formatting character (code `UNSAFE_PATH_NAME`).",
        next: "Create the file under a name without those characters (the message shows each as \\u{XXXX}); an existing file with such a name can still be updated or deleted.",
    }
    PathConflict = "path_conflict" {
        meaning: "A path runs through a file as if it were a directory (in the tree, or a file the same patch creates).",
        next: "Check the path; a file cannot become a directory within one patch.",
    }
    NotAFile = "not_a_file" {
        meaning: "A path to update, delete or read is a directory, FIFO, socket or device.",
        next: "Name a regular file.",
    }
    Symlink = "symlink" {
        meaning: "A path or one of its ancestors is a symbolic link; links are never followed.",
        next: "Use the real path.",
    }
    NotText = "not_text" {
        meaning: "The file to update is not UTF-8 text.",
        next: "Do not patch it: a patch changes text files only.",
    }
    TooLarge = "too_large" {
        meaning: "A file the patch reads is over the 64 MiB patch limit.",
        next: "Change that file another way (a command), or split it.",
    }
    VersionConflict = "version_conflict" {
        meaning: "A file is no longer at the version `expected_versions` names; nothing was written. `diff` shows what changed since, when the server still knows the expected content.",
        next: "Redo the patch on the current content (`diff` shows it, from the expected version to the current one; else read the file) and send it with the current version; never force the old one.",
    }
    BadExpectedVersion = "bad_expected_version" {
        meaning: "A value of `expected_versions` is not a version (`sha256:<64 hex>` or `absent`).",
        next: "Send the version `read` or `version` returned, unchanged.",
    }
    IoError = "io_error" {
        meaning: "The filesystem failed while the patch's files were read.",
        next: "Inspect the message; a retry may succeed.",
    }
}

impl std::fmt::Display for RefusalReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The file line nearest to a line a refused chunk expected (`patch_line` of the refusal).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Nearest {
    /// 1-based line of the file (as the patch found it at that chunk).
    pub line: u64,
    /// That line's text (at most 240 bytes, cut with `…`).
    pub text: String,
    /// The patch's line it was compared with.
    pub expected: String,
    /// `whitespace`, `indentation`, `token`, `text` or `position`.
    pub differs: LineDifference,
    /// For `token`: the one token that differs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<TokenChange>,
}

/// The patch's token and the file's, where they differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TokenChange {
    /// The token as the patch has it.
    pub expected: String,
    /// The token as the file has it.
    pub found: String,
}
