//! Turns command-line arguments and the environment into a validated configuration: the
//! registry, the state directory, the ledger path and the HTTP token.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use codespace_policy::Registry;
use rand::Rng;

use crate::cli::RegistryArgs;
use crate::process_env::ProcessEnv;

/// A configuration error: which flag, key or file, and why. Exits with status 2.
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

pub(crate) fn usage(msg: impl Into<String>) -> UsageError {
    UsageError(msg.into())
}

/// Loads the registry from `--config`, or builds the zero-config one from the working
/// directory.
#[expect(
    clippy::disallowed_methods,
    reason = "the operator's registry file, outside every workspace"
)]
pub(crate) fn load_registry(args: &RegistryArgs) -> Result<(Registry, String), UsageError> {
    match &args.config {
        Some(path) => {
            if args.write {
                return Err(usage(
                    "--write applies only to the zero-config workspace; set \"profile\" in the --config file instead",
                ));
            }
            let text = fs::read_to_string(path)
                .map_err(|e| usage(format!("--config {}: cannot read: {e}", path.display())))?;
            let registry = Registry::parse(&text).map_err(|e| {
                usage(format!("--config {}: key {}: {}", path.display(), e.key, e.reason))
            })?;
            Ok((registry, path.display().to_string()))
        }
        None => {
            let cwd = std::env::current_dir().map_err(|e| {
                usage(format!("cannot read the current directory for workspace \"default\": {e}"))
            })?;
            let registry = Registry::zero_config(cwd, args.write).map_err(|e| {
                usage(format!(
                    "zero-config workspace: key {}: {}; start from a project directory, or register workspaces with --config FILE",
                    e.key, e.reason
                ))
            })?;
            Ok((registry, "(zero-config: current directory)".to_owned()))
        }
    }
}

/// `$XDG_STATE_HOME/codespace`, else `~/.local/state/codespace`; nothing is created yet.
#[expect(
    clippy::disallowed_methods,
    reason = "the state directory is named by the process environment"
)]
pub(crate) fn state_dir_path() -> Result<PathBuf, UsageError> {
    let base = match std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
        Some(v) if Path::new(&v).is_absolute() => PathBuf::from(v),
        Some(_) => return Err(usage("XDG_STATE_HOME must be an absolute path")),
        None => {
            let home = std::env::var_os("HOME").filter(|v| !v.is_empty()).ok_or_else(|| {
                usage("neither XDG_STATE_HOME nor HOME is set: cannot place the state directory")
            })?;
            PathBuf::from(home).join(".local").join("state")
        }
    };
    Ok(base.join("codespace"))
}

/// Creates the state directory (0700) once every flag has been checked.
#[expect(
    clippy::disallowed_methods,
    reason = "the server's own state directory, outside every workspace"
)]
pub(crate) fn create_state_dir(dir: &Path) -> Result<(), UsageError> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| usage(format!("state directory {}: {e}", dir.display())))
}

/// The ledger location: `:memory:`, or a file outside every workspace root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LedgerPath {
    Memory,
    File(PathBuf),
}

pub(crate) fn ledger_path<'a>(
    flag: Option<&str>,
    state_dir: &Path,
    roots: impl Iterator<Item = &'a Path>,
) -> Result<LedgerPath, UsageError> {
    let path = match flag {
        Some(":memory:") => return Ok(LedgerPath::Memory),
        Some("") => return Err(usage("--operations-db: empty path")),
        Some(p) => {
            let p = PathBuf::from(p);
            if p.is_absolute() {
                p
            } else {
                std::env::current_dir()
                    .map_err(|e| usage(format!("--operations-db: current directory: {e}")))?
                    .join(p)
            }
        }
        None => state_dir.join("operations.sqlite3"),
    };
    // Compare against canonical roots. The file is not resolved (it may not exist), nor need
    // its directory exist yet: the nearest existing ancestor is.
    let parent = path.parent().unwrap_or_else(|| Path::new("/"));
    let name = path.file_name().map(PathBuf::from).unwrap_or_default();
    let resolved = resolve_existing_prefix(parent).join(name);
    for root in roots {
        if resolved.starts_with(root) {
            return Err(usage(match flag {
                Some(_) => format!(
                    "--operations-db {}: the ledger must not lie inside the workspace root {} (a command could rewrite it); choose a path outside every workspace root, or :memory:",
                    path.display(),
                    root.display()
                ),
                None => format!(
                    "the default ledger {} lies inside the workspace root {} (a command could rewrite it): start from a project directory, register workspaces with --config FILE, or put the ledger elsewhere with --operations-db PATH (or :memory:)",
                    path.display(),
                    root.display()
                ),
            }));
        }
    }
    Ok(LedgerPath::File(resolved))
}

/// `path` with its longest existing prefix canonicalised and the rest appended unchanged.
#[expect(
    clippy::disallowed_methods,
    reason = "a ledger path given by the operator is compared by its real location"
)]
fn resolve_existing_prefix(path: &Path) -> PathBuf {
    let mut base = path;
    let mut rest = Vec::new();
    loop {
        if let Ok(canonical) = fs::canonicalize(base) {
            return rest.iter().rev().fold(canonical, |p, name| p.join(name));
        }
        match (base.parent(), base.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                base = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Where the HTTP bearer token comes from.
pub(crate) enum TokenSource {
    Given,
    File(PathBuf),
    /// Generated: written, once the port is bound, to `http-token-<port>` in this state
    /// directory.
    Generated(PathBuf),
    None,
}

/// The token to require and where it came from, when it is given (`--no-auth`, `--token`,
/// `--token-file`): read before anything is created. `None` means one is to be generated.
#[expect(clippy::disallowed_methods, reason = "the operator's token file, outside every workspace")]
pub(crate) fn given_token(
    token: Option<&str>,
    token_file: Option<&Path>,
    no_auth: bool,
) -> Result<Option<(Option<String>, TokenSource)>, UsageError> {
    if no_auth {
        return Ok(Some((None, TokenSource::None)));
    }
    if let Some(t) = token {
        let t = t.trim();
        if t.is_empty() {
            return Err(usage(
                "--token / CODESPACE_HTTP_TOKEN is empty; give a token or use --no-auth on loopback",
            ));
        }
        return Ok(Some((Some(t.to_owned()), TokenSource::Given)));
    }
    if let Some(path) = token_file {
        let text = fs::read_to_string(path)
            .map_err(|e| usage(format!("--token-file {}: cannot read: {e}", path.display())))?;
        let t = text.lines().next().unwrap_or("").trim().to_owned();
        if t.is_empty() {
            return Err(usage(format!("--token-file {}: the file is empty", path.display())));
        }
        return Ok(Some((Some(t), TokenSource::File(path.to_path_buf()))));
    }
    Ok(None)
}

/// A fresh token, to be written by [`write_generated_token`] once the port is bound.
pub(crate) fn generate_token(state_dir: &Path) -> (Option<String>, TokenSource) {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    (Some(hex::encode(bytes)), TokenSource::Generated(state_dir.to_path_buf()))
}

/// Writes a generated token to a 0600 file named for the bound port, so two servers never
/// share or overwrite each other's token and a start that failed to bind writes nothing.
/// Its path (never the token) is reported.
pub(crate) fn write_generated_token(
    state_dir: &Path,
    port: u16,
    token: &str,
) -> Result<PathBuf, UsageError> {
    let path = state_dir.join(format!("http-token-{port}"));
    write_secret(&path, token).map_err(|e| {
        usage(format!("cannot write the generated token to {}: {e}", path.display()))
    })?;
    Ok(path)
}

#[expect(clippy::disallowed_methods, reason = "the token file in the server's own state directory")]
pub(crate) fn write_secret(path: &Path, secret: &str) -> std::io::Result<()> {
    // Replace rather than rewrite: O_CREAT|O_EXCL never follows a pre-planted link.
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    let _ = fs::remove_file(&tmp);
    let mut f = fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
    f.write_all(secret.as_bytes())?;
    f.write_all(b"\n")?;
    f.sync_all()?;
    fs::set_permissions(&tmp, fs::Permissions::from_mode(0o600))?;
    fs::rename(&tmp, path)
}

/// The reaper shim's binary: `codespace-reaper` beside `exe` when it is there (a small
/// binary that starts in a fraction of the server's time), else `exe` itself in its hidden
/// role.
#[expect(clippy::disallowed_methods, reason = "the reaper shim installed beside this binary")]
fn reaper_exe(exe: PathBuf) -> PathBuf {
    let dedicated = exe.with_file_name("codespace-reaper");
    match fs::metadata(&dedicated) {
        Ok(m) if m.is_file() && m.permissions().mode() & 0o111 != 0 => dedicated,
        Ok(_) | Err(_) => exe,
    }
}

/// The process supervisor and how commands are started, from the process variables (see
/// [`ProcessEnv`]). `masked` are the paths sandboxed commands must never see; output beyond
/// the ring spills to `spill_dir` (`<state_dir>/spill`, masked with the state directory)
/// when given.
#[expect(
    clippy::disallowed_methods,
    reason = "commands inherit PATH, HOME and LANG from the process environment"
)]
pub(crate) fn processes(
    vars: &ProcessEnv,
    masked: Vec<PathBuf>,
    spill_dir: Option<PathBuf>,
) -> Result<(Arc<codespace_process::Supervisor>, codespace_gateway::ExecSettings), UsageError> {
    let exe = std::env::current_exe()
        .map_err(|e| usage(format!("cannot locate the codespace binary: {e}")))?;
    let mut config = codespace_process::SupervisorConfig::new(reaper_exe(exe));
    config.max_live = usize::try_from(vars.max_processes).unwrap_or(usize::MAX);
    config.spill_dir = spill_dir;
    config.spill_bytes = vars.spill_bytes;
    let settings = codespace_gateway::ExecSettings {
        timeout: std::time::Duration::from_secs(vars.timeout_secs),
        path: std::env::var("PATH")
            .ok()
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| codespace_process::DEFAULT_PATH.to_owned()),
        home: std::env::var("HOME")
            .ok()
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "/".to_owned()),
        lang: std::env::var("LANG")
            .ok()
            .filter(|l| !l.is_empty())
            .unwrap_or_else(|| "C.UTF-8".to_owned()),
        max_pids: vars.max_pids,
        masked,
    };
    Ok((codespace_process::Supervisor::new(config), settings))
}
