//! Registry model and its strict JSON loader: every unknown key or value fails the load with
//! the key path and the reason.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use codespace_types::{
    Approvals, Approvers, EnvironmentKind, NetworkPolicy, Profile, SandboxSetting,
};

use crate::file::{self, WorkspaceFile};

/// Id of the zero-config workspace (the current directory).
pub const DEFAULT_WORKSPACE_ID: &str = "default";
/// Id of the built-in host environment, always present.
const HOST_ENVIRONMENT_ID: &str = "host";

/// A registry that failed to load: which key, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {reason}")]
pub struct RegistryError {
    /// Dotted key path, e.g. `workspaces.demo.profile` (`(top level)` for the document).
    pub key: String,
    pub reason: String,
}

fn err(key: impl Into<String>, reason: impl Into<String>) -> RegistryError {
    RegistryError { key: key.into(), reason: reason.into() }
}

/// One registered workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    pub id: String,
    /// Absolute, lexically normalised root.
    pub root: PathBuf,
    pub profile: Profile,
    pub network: NetworkPolicy,
    pub approvals: Approvals,
    /// Who may answer the workspace's holds: the agent too, or only a person.
    pub approvers: Approvers,
    /// Id of the environment (`host` when not given).
    pub environment: String,
    pub environment_kind: EnvironmentKind,
    pub sandbox: SandboxSetting,
    /// Absolute, lexically normalised directories a sandboxed command may read (and
    /// execute) besides the system directories and the root: toolchains under a home
    /// directory, say.
    pub extra_read_roots: Vec<PathBuf>,
    /// Variables added to every command's clean environment (may set `PATH`); never a
    /// `CODESPACE_*` name.
    pub env: BTreeMap<String, String>,
    /// The time limit of a command that asks for none (none: the server's default).
    pub timeout_secs: Option<u64>,
    /// The largest time limit a command may ask for (none: the default limit).
    pub max_timeout_secs: Option<u64>,
    /// How long a command CodeSpace ends (`terminate_process`, its time limit, server
    /// shutdown) has between SIGTERM and SIGKILL, in milliseconds; also the most
    /// `terminate_process`'s `grace_ms` may ask for.
    pub kill_grace_ms: u64,
}

/// The loaded registry. Loaded once at start; models cannot add workspaces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Registry {
    workspaces: BTreeMap<String, Workspace>,
}

impl Registry {
    /// The zero-config registry: `dir` as workspace `default`.
    pub fn zero_config(dir: PathBuf, write: bool) -> Result<Registry, RegistryError> {
        let key = format!("workspaces.{DEFAULT_WORKSPACE_ID}.root");
        let root = normalize_root(&key, &dir)?;
        let ws = Workspace {
            id: DEFAULT_WORKSPACE_ID.to_owned(),
            root,
            profile: if write { Profile::WorkspaceWrite } else { Profile::ReadOnly },
            network: NetworkPolicy::Restricted,
            approvals: Approvals::Off,
            approvers: Approvers::AgentOrPerson,
            environment: HOST_ENVIRONMENT_ID.to_owned(),
            environment_kind: EnvironmentKind::Host,
            sandbox: SandboxSetting::On,
            extra_read_roots: Vec::new(),
            env: BTreeMap::new(),
            timeout_secs: None,
            max_timeout_secs: None,
            kill_grace_ms: crate::DEFAULT_KILL_GRACE_MS,
        };
        Ok(Registry { workspaces: BTreeMap::from([(ws.id.clone(), ws)]) })
    }

    /// Parses and validates registry JSON text.
    pub fn parse(text: &str) -> Result<Registry, RegistryError> {
        let doc = file::decode(text)?;
        let mut environments =
            BTreeMap::from([(HOST_ENVIRONMENT_ID.to_owned(), EnvironmentKind::Host)]);
        for (id, file::Object(env)) in doc.environments {
            let key = format!("environments.{id}");
            check_id(&key, &id)?;
            let kind = env.kind.ok_or_else(|| err(format!("{key}.kind"), "missing (required)"))?;
            if id == HOST_ENVIRONMENT_ID && kind != EnvironmentKind::Host {
                return Err(err(key, "the built-in environment \"host\" cannot change kind"));
            }
            environments.insert(id, kind);
        }
        let mut workspaces = BTreeMap::new();
        for (id, file::Object(ws)) in doc.workspaces {
            let key = format!("workspaces.{id}");
            check_id(&key, &id)?;
            let ws = workspace(&id, ws, &key, &environments)?;
            workspaces.insert(id, ws);
        }
        let registry = Registry { workspaces };
        check_nesting(registry.workspaces.values().map(|w| (w.id.as_str(), w.root.as_path())))?;
        Ok(registry)
    }

    pub fn get(&self, id: &str) -> Option<&Workspace> {
        self.workspaces.get(id)
    }

    pub fn workspaces(&self) -> impl Iterator<Item = &Workspace> {
        self.workspaces.values()
    }

    pub fn len(&self) -> usize {
        self.workspaces.len()
    }

    pub fn is_empty(&self) -> bool {
        self.workspaces.is_empty()
    }
}

/// Checks what the types cannot: absolute roots, a registered environment, the command
/// settings.
fn workspace(
    id: &str,
    ws: WorkspaceFile,
    key: &str,
    environments: &BTreeMap<String, EnvironmentKind>,
) -> Result<Workspace, RegistryError> {
    let root_key = format!("{key}.root");
    let root = ws.root.ok_or_else(|| err(&root_key, "missing (required)"))?;
    let root = normalize_root(&root_key, Path::new(&root))?;
    let extra_read_roots = ws
        .extra_read_roots
        .iter()
        .enumerate()
        .map(|(i, path)| normalize_root(&format!("{key}.extra_read_roots[{i}]"), Path::new(path)))
        .collect::<Result<Vec<_>, _>>()?;
    crate::commands::check(key, &ws.env, ws.timeout_secs, ws.max_timeout_secs)?;
    crate::commands::check_grace(key, ws.kill_grace_ms)?;
    let environment = ws.environment.unwrap_or_else(|| HOST_ENVIRONMENT_ID.to_owned());
    let Some(&environment_kind) = environments.get(&environment) else {
        return Err(err(
            format!("{key}.environment"),
            format!(
                "names environment {environment:?}, which is not registered under \"environments\""
            ),
        ));
    };
    Ok(Workspace {
        id: id.to_owned(),
        root,
        profile: ws.profile,
        network: ws.network,
        approvals: ws.approvals,
        approvers: ws.approvers,
        environment,
        environment_kind,
        sandbox: ws.sandbox,
        extra_read_roots,
        env: ws.env,
        timeout_secs: ws.timeout_secs,
        max_timeout_secs: ws.max_timeout_secs,
        kill_grace_ms: ws.kill_grace_ms.unwrap_or(crate::DEFAULT_KILL_GRACE_MS),
    })
}

/// Refuses a root that lies inside (or equals) another root, comparing whole components so
/// `/srv/app-evil` is not inside `/srv/app`.
pub fn check_nesting<'a>(
    roots: impl IntoIterator<Item = (&'a str, &'a Path)>,
) -> Result<(), RegistryError> {
    let roots: Vec<(&str, &Path)> = roots.into_iter().collect();
    for (i, (id, root)) in roots.iter().enumerate() {
        for (other_id, other) in roots.iter().skip(i + 1) {
            let (inner_id, inner, outer_id, outer) = if other.starts_with(root) {
                (other_id, other, id, root)
            } else if root.starts_with(other) {
                (id, root, other_id, other)
            } else {
                continue;
            };
            return Err(err(
                format!("workspaces.{inner_id}.root"),
                format!(
                    "{} lies inside the root of workspace {outer_id:?} ({}); roots must not nest",
                    inner.display(),
                    outer.display()
                ),
            ));
        }
    }
    Ok(())
}

fn normalize_root(key: &str, root: &Path) -> Result<PathBuf, RegistryError> {
    if !root.is_absolute() {
        return Err(err(key, format!("{} is not an absolute path", root.display())));
    }
    let mut out = PathBuf::from("/");
    for c in root.components() {
        match c {
            Component::RootDir => {}
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(err(
                    key,
                    format!("{} contains '..'; give the real path", root.display()),
                ));
            }
            Component::Prefix(_) => return Err(err(key, "path prefixes are not supported")),
        }
    }
    if out == Path::new("/") {
        return Err(err(key, "the filesystem root cannot be a workspace"));
    }
    Ok(out)
}

fn check_id(key: &str, id: &str) -> Result<(), RegistryError> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(err(key, "ids must be 1-64 characters of A-Z, a-z, 0-9, '-', '_', '.'"))
    }
}
