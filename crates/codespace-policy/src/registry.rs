//! Registry model and its strict JSON loader: every unknown key or value fails the load with
//! the key path and the reason.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    ReadOnly,
    WorkspaceWrite,
}

impl Profile {
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::ReadOnly => "read-only",
            Profile::WorkspaceWrite => "workspace-write",
        }
    }
    pub fn can_write(self) -> bool {
        matches!(self, Profile::WorkspaceWrite)
    }
    pub fn can_exec(self) -> bool {
        matches!(self, Profile::WorkspaceWrite)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Network {
    Restricted,
    Enabled,
}

impl Network {
    pub fn as_str(self) -> &'static str {
        match self {
            Network::Restricted => "restricted",
            Network::Enabled => "enabled",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approvals {
    Off,
    Confirm,
}

impl Approvals {
    pub fn as_str(self) -> &'static str {
        match self {
            Approvals::Off => "off",
            Approvals::Confirm => "confirm",
        }
    }
}

/// The operator's `sandbox` setting: `on` (default, fail closed) or `off` (explicit opt-out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxSetting {
    On,
    Off,
}

impl SandboxSetting {
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxSetting::On => "on",
            SandboxSetting::Off => "off",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvironmentKind {
    Host,
    LinuxContainer,
}

impl EnvironmentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EnvironmentKind::Host => "host",
            EnvironmentKind::LinuxContainer => "linux-container",
        }
    }
}

/// One registered workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    pub id: String,
    /// Absolute, lexically normalised root.
    pub root: PathBuf,
    pub profile: Profile,
    pub network: Network,
    pub approvals: Approvals,
    /// Id of the environment (`host` when not given).
    pub environment: String,
    pub environment_kind: EnvironmentKind,
    pub sandbox: SandboxSetting,
    /// Absolute, lexically normalised directories a sandboxed command may read (and
    /// execute) besides the system directories and the root: toolchains under a home
    /// directory, say.
    pub extra_read_roots: Vec<PathBuf>,
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
            network: Network::Restricted,
            approvals: Approvals::Off,
            environment: HOST_ENVIRONMENT_ID.to_owned(),
            environment_kind: EnvironmentKind::Host,
            sandbox: SandboxSetting::On,
            extra_read_roots: Vec::new(),
        };
        Ok(Registry { workspaces: BTreeMap::from([(ws.id.clone(), ws)]) })
    }

    /// Parses and validates registry JSON text.
    pub fn parse(text: &str) -> Result<Registry, RegistryError> {
        let doc: Value = serde_json::from_str(text)
            .map_err(|e| err("(top level)", format!("not valid JSON: {e}")))?;
        let top = as_object(&doc, "(top level)")?;
        known_keys(top, "", &["environments", "workspaces"])?;

        let mut environments =
            BTreeMap::from([(HOST_ENVIRONMENT_ID.to_owned(), EnvironmentKind::Host)]);
        if let Some(envs) = top.get("environments") {
            for (id, env) in as_object(envs, "environments")? {
                let key = format!("environments.{id}");
                check_id(&key, id)?;
                let obj = as_object(env, &key)?;
                known_keys(obj, &key, &["kind"])?;
                let kind_key = format!("{key}.kind");
                let kind = match required_str(obj, "kind", &kind_key)? {
                    "host" => EnvironmentKind::Host,
                    "linux-container" => EnvironmentKind::LinuxContainer,
                    other => {
                        return Err(err(
                            kind_key,
                            format!(
                                "unknown kind {other:?} (expected \"host\" or \"linux-container\")"
                            ),
                        ));
                    }
                };
                if id == HOST_ENVIRONMENT_ID && kind != EnvironmentKind::Host {
                    return Err(err(key, "the built-in environment \"host\" cannot change kind"));
                }
                environments.insert(id.clone(), kind);
            }
        }

        let mut workspaces = BTreeMap::new();
        if let Some(wss) = top.get("workspaces") {
            for (id, ws) in as_object(wss, "workspaces")? {
                let key = format!("workspaces.{id}");
                check_id(&key, id)?;
                let ws = parse_workspace(id, ws, &key, &environments)?;
                workspaces.insert(id.clone(), ws);
            }
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

fn parse_workspace(
    id: &str,
    value: &Value,
    key: &str,
    environments: &BTreeMap<String, EnvironmentKind>,
) -> Result<Workspace, RegistryError> {
    let obj = as_object(value, key)?;
    known_keys(
        obj,
        key,
        &["root", "profile", "network", "approvals", "environment", "sandbox", "extra_read_roots"],
    )?;
    let root_key = format!("{key}.root");
    let root = normalize_root(&root_key, Path::new(required_str(obj, "root", &root_key)?))?;
    let profile = match optional_str(obj, "profile", key)? {
        None | Some("read-only") => Profile::ReadOnly,
        Some("workspace-write") => Profile::WorkspaceWrite,
        Some(other) => {
            return Err(bad_value(key, "profile", other, "\"read-only\" or \"workspace-write\""));
        }
    };
    let network = match optional_str(obj, "network", key)? {
        None | Some("restricted") => Network::Restricted,
        Some("enabled") => Network::Enabled,
        Some(other) => {
            return Err(bad_value(key, "network", other, "\"restricted\" or \"enabled\""));
        }
    };
    let approvals = match optional_str(obj, "approvals", key)? {
        None | Some("off") => Approvals::Off,
        Some("confirm") => Approvals::Confirm,
        Some(other) => return Err(bad_value(key, "approvals", other, "\"off\" or \"confirm\"")),
    };
    let sandbox = match optional_str(obj, "sandbox", key)? {
        None | Some("on") => SandboxSetting::On,
        Some("off") => SandboxSetting::Off,
        Some(other) => return Err(bad_value(key, "sandbox", other, "\"on\" or \"off\"")),
    };
    let mut extra_read_roots = Vec::new();
    if let Some(list) = obj.get("extra_read_roots") {
        let list_key = format!("{key}.extra_read_roots");
        let Value::Array(items) = list else {
            return Err(err(list_key, "must be an array of absolute paths"));
        };
        for (i, item) in items.iter().enumerate() {
            let item_key = format!("{list_key}[{i}]");
            let Value::String(path) = item else {
                return Err(err(item_key, "must be a string (an absolute path)"));
            };
            extra_read_roots.push(normalize_root(&item_key, Path::new(path))?);
        }
    }
    let environment =
        optional_str(obj, "environment", key)?.unwrap_or(HOST_ENVIRONMENT_ID).to_owned();
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
        profile,
        network,
        approvals,
        environment,
        environment_kind,
        sandbox,
        extra_read_roots,
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

fn as_object<'a>(value: &'a Value, key: &str) -> Result<&'a Map<String, Value>, RegistryError> {
    value
        .as_object()
        .ok_or_else(|| err(key, format!("expected an object, found {}", kind_of(value))))
}

fn known_keys(obj: &Map<String, Value>, key: &str, allowed: &[&str]) -> Result<(), RegistryError> {
    for k in obj.keys() {
        if !allowed.contains(&k.as_str()) {
            let path = if key.is_empty() { k.clone() } else { format!("{key}.{k}") };
            return Err(err(
                path,
                format!("unknown key (expected one of: {})", allowed.join(", ")),
            ));
        }
    }
    Ok(())
}

fn required_str<'a>(
    obj: &'a Map<String, Value>,
    name: &str,
    key: &str,
) -> Result<&'a str, RegistryError> {
    match obj.get(name) {
        None => Err(err(key, "missing (required)")),
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(err(key, format!("expected a string, found {}", kind_of(other)))),
    }
}

fn optional_str<'a>(
    obj: &'a Map<String, Value>,
    name: &str,
    key: &str,
) -> Result<Option<&'a str>, RegistryError> {
    match obj.get(name) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(err(
            format!("{key}.{name}"),
            format!("expected a string, found {}", kind_of(other)),
        )),
    }
}

fn bad_value(key: &str, name: &str, value: &str, expected: &str) -> RegistryError {
    err(format!("{key}.{name}"), format!("unknown value {value:?} (expected {expected})"))
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
