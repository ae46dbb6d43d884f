//! The person's credential for `/inbox`: a token of its own, so the MCP bearer token (the
//! agent's) can neither answer a hold nor write an instruction there. Given with
//! `--person-token` / `CODESPACE_PERSON_TOKEN` or `--person-token-file`, or generated and
//! written, once the port is bound, to `person-token-<port>` in the state directory (0600,
//! removed when the server stops), whose path (never the token) is printed. It must differ
//! from the MCP token, and `--no-auth` (which lifts the MCP token) never lifts it.

use std::path::{Path, PathBuf};

use rand::Rng;

use crate::cli::ServeArgs;
use crate::config::{UsageError, usage, write_secret};

/// Where the person token came from.
enum Source {
    Given,
    File(PathBuf),
    /// Generated: written to `person-token-<port>` in this state directory.
    Generated(PathBuf),
}

/// The person token of an HTTP server.
pub(crate) struct PersonToken {
    token: String,
    source: Source,
}

impl PersonToken {
    /// The token the flags give, or a fresh one to be written to `state_dir` once the port
    /// is bound. Refused when empty, unreadable, or the same as the MCP token.
    #[expect(
        clippy::disallowed_methods,
        reason = "the operator's token file, outside every workspace"
    )]
    pub(crate) fn settle(
        args: &ServeArgs,
        state_dir: &Path,
        mcp_token: Option<&str>,
    ) -> Result<PersonToken, UsageError> {
        let (token, source) = if let Some(t) = &args.person_token {
            (t.trim().to_owned(), Source::Given)
        } else if let Some(path) = &args.person_token_file {
            let text = std::fs::read_to_string(path).map_err(|e| {
                usage(format!("--person-token-file {}: cannot read: {e}", path.display()))
            })?;
            (text.lines().next().unwrap_or("").trim().to_owned(), Source::File(path.clone()))
        } else {
            let mut bytes = [0u8; 32];
            rand::rng().fill_bytes(&mut bytes);
            (hex::encode(bytes), Source::Generated(state_dir.to_path_buf()))
        };
        if token.is_empty() {
            return Err(usage(
                "--person-token / CODESPACE_PERSON_TOKEN / --person-token-file is empty",
            ));
        }
        if mcp_token.is_some_and(|m| m == token) {
            return Err(usage(
                "the person token (for /inbox) must differ from the MCP bearer token: with one token the agent could answer its own holds",
            ));
        }
        Ok(PersonToken { token, source })
    }

    pub(crate) fn token(&self) -> &str {
        &self.token
    }

    /// Writes a generated token for the bound `port` and says where the token is; returns
    /// the file to remove at stop.
    pub(crate) fn announce(&self, port: u16) -> Result<Option<PathBuf>, UsageError> {
        match &self.source {
            Source::Given => {
                eprintln!(
                    "person token for /inbox given by --person-token / CODESPACE_PERSON_TOKEN"
                );
                Ok(None)
            }
            Source::File(path) => {
                eprintln!("person token for /inbox read from {}", path.display());
                Ok(None)
            }
            Source::Generated(dir) => {
                let path = dir.join(format!("person-token-{port}"));
                write_secret(&path, &self.token).map_err(|e| {
                    usage(format!("cannot write the person token to {}: {e}", path.display()))
                })?;
                eprintln!(
                    "person token for /inbox generated and written to {} (mode 0600; the page asks for it)",
                    path.display()
                );
                Ok(Some(path))
            }
        }
    }
}
