//! The policy a command runs under, and its argv encoding (it crosses the reaper shim's
//! command line, so it is a list of arguments rather than one string: paths may hold any
//! byte but NUL).

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt as _;
use std::path::PathBuf;

/// Whether the command may use the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum NetworkPolicy {
    /// A private network namespace (only a down loopback), no TCP bind or connect
    /// (Landlock), and no socket of any family but `AF_UNIX` (seccomp).
    Restricted,
    /// The host's network; the filesystem rules still apply.
    Enabled,
}

impl NetworkPolicy {
    /// The stable token of the encoding: `restricted` or `enabled`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Restricted => "restricted",
            Self::Enabled => "enabled",
        }
    }

    fn parse(s: &[u8]) -> Option<Self> {
        match s {
            b"restricted" => Some(Self::Restricted),
            b"enabled" => Some(Self::Enabled),
            _ => None,
        }
    }
}

/// The smallest [`SandboxPolicy::max_pids`]: the kernel refuses a namespace `pid_max`
/// below 301 (it keeps pids under 300 for the first processes after a wrap).
pub const MIN_MAX_PIDS: u32 = 301;
/// The largest [`SandboxPolicy::max_pids`] (the kernel's own `PID_MAX_LIMIT`).
pub const MAX_MAX_PIDS: u32 = 4_194_304;

/// What a sandboxed command sees and may do.
///
/// The command runs in a new root that holds only the system directories (`/usr`, `/bin`,
/// `/sbin`, `/lib*`, `/etc`, `/opt`; read-only), a read-only `/sys`, a fresh `/proc`, a
/// minimal `/dev`, a private `/tmp`, and the roots listed here at their own absolute paths.
/// Everything else of the host (home directories, `/run`, `/var`, the host's `/tmp`, the
/// server's state) is not there at all.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct SandboxPolicy {
    /// Absolute directories visible read-only (the workspace under `read-only`, the
    /// registry's `extra_read_roots`).
    pub read_roots: Vec<PathBuf>,
    /// Absolute directories visible and writable. Empty: nothing of the host is writable.
    pub writable_roots: Vec<PathBuf>,
    /// Absolute paths hidden even when they lie beneath a visible root (the server's state
    /// directory, ledger, token and registry files): a directory is covered by an empty
    /// read-only tmpfs, a file by `/dev/null`.
    pub masked: Vec<PathBuf>,
    /// The network policy.
    pub network: NetworkPolicy,
    /// The `pid_max` of the command's PID namespace: at most `max_pids - 1` tasks
    /// (processes and threads) exist in the sandbox at once. Between [`MIN_MAX_PIDS`] and
    /// [`MAX_MAX_PIDS`].
    pub max_pids: u32,
    /// The root (one of `read_roots` or `writable_roots`, canonical) that is the working
    /// directory the launcher inherits: it is bound from that directory, never by looking
    /// its path up again, so a root path replaced since the caller entered the directory
    /// through a descriptor is not followed. The command starts there. `None`: the roots
    /// are bound by path and the command starts in the inherited directory's path.
    pub workdir: Option<PathBuf>,
}

/// The first token of an encoded policy.
const TAG: &str = "sandbox-v3";
/// Upper bound on each path list of the encoding.
const MAX_PATHS: usize = 4096;

impl SandboxPolicy {
    /// The argv encoding: `sandbox-v3 <restricted|enabled> <max_pids>`, then four path
    /// lists (read, writable, masked, and the workdir as a list of at most one), each as
    /// `<n> <path 1> … <path n>`.
    pub fn to_args(&self) -> Vec<OsString> {
        let mut out: Vec<OsString> =
            vec![TAG.into(), self.network.as_str().into(), self.max_pids.to_string().into()];
        let workdir: Vec<PathBuf> = self.workdir.iter().cloned().collect();
        for list in [&self.read_roots, &self.writable_roots, &self.masked, &workdir] {
            out.push(list.len().to_string().into());
            out.extend(list.iter().map(|p| p.clone().into_os_string()));
        }
        out
    }

    /// Decodes [`Self::to_args`] from the front of `args`, consuming exactly the policy's
    /// arguments. Refuses a relative or empty path, an out-of-range `max_pids`, and a
    /// workdir that is not one of the roots.
    pub fn from_args(args: &mut impl Iterator<Item = OsString>) -> Result<Self, String> {
        let tag = args.next().ok_or("missing sandbox policy")?;
        if tag.as_bytes() != TAG.as_bytes() {
            return Err(format!("unsupported sandbox policy {tag:?}, expected {TAG}"));
        }
        let network = args
            .next()
            .and_then(|n| NetworkPolicy::parse(n.as_bytes()))
            .ok_or("network must be restricted or enabled")?;
        let max_pids = args
            .next()
            .and_then(|n| n.to_str().and_then(|n| n.parse::<u32>().ok()))
            .filter(|n| (MIN_MAX_PIDS..=MAX_MAX_PIDS).contains(n))
            .ok_or(format!("max_pids must be between {MIN_MAX_PIDS} and {MAX_MAX_PIDS}"))?;
        let mut lists = Vec::with_capacity(4);
        for what in ["read", "writable", "masked", "workdir"] {
            let count = args
                .next()
                .and_then(|n| n.to_str().and_then(|n| n.parse::<usize>().ok()))
                .filter(|n| *n <= MAX_PATHS)
                .ok_or(format!("missing or invalid {what} path count"))?;
            let mut list = Vec::with_capacity(count);
            for _ in 0..count {
                let path = PathBuf::from(args.next().ok_or(format!("missing {what} path"))?);
                if !path.is_absolute() {
                    return Err(format!("{what} path {} is not absolute", path.display()));
                }
                list.push(path);
            }
            lists.push(list);
        }
        let mut workdirs = lists.pop().unwrap_or_default();
        let masked = lists.pop().unwrap_or_default();
        let writable_roots = lists.pop().unwrap_or_default();
        let read_roots = lists.pop().unwrap_or_default();
        let workdir = workdirs.pop();
        if !workdirs.is_empty() {
            return Err("at most one workdir".to_owned());
        }
        if let Some(w) =
            workdir.as_ref().filter(|w| !read_roots.contains(w) && !writable_roots.contains(w))
        {
            return Err(format!("workdir {} is not one of the roots", w.display()));
        }
        Ok(Self { read_roots, writable_roots, masked, network, max_pids, workdir })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_round_trip() {
        for p in [
            SandboxPolicy {
                read_roots: vec![],
                writable_roots: vec![],
                masked: vec![],
                network: NetworkPolicy::Restricted,
                max_pids: MIN_MAX_PIDS,
                workdir: None,
            },
            SandboxPolicy {
                read_roots: vec!["/opt/tool chain".into()],
                writable_roots: vec!["/w/a b".into(), "/tmp/x\ny".into()],
                masked: vec!["/state".into()],
                network: NetworkPolicy::Enabled,
                max_pids: 1024,
                workdir: Some("/w/a b".into()),
            },
        ] {
            let mut args = p.to_args();
            args.push("rest".into());
            let mut it = args.into_iter();
            assert_eq!(SandboxPolicy::from_args(&mut it), Ok(p));
            assert_eq!(it.next(), Some("rest".into()));
        }
    }

    #[test]
    fn args_refuse_malformed() {
        let d = |s: &[&str]| {
            SandboxPolicy::from_args(
                &mut s.iter().map(OsString::from).collect::<Vec<_>>().into_iter(),
            )
        };
        assert!(d(&[]).is_err());
        assert!(d(&["sandbox-v2", "enabled", "400", "0", "0", "0"]).is_err());
        assert!(d(&["sandbox-v3", "open", "400", "0", "0", "0", "0"]).is_err());
        assert!(d(&["sandbox-v3", "enabled", "300", "0", "0", "0", "0"]).is_err());
        assert!(d(&["sandbox-v3", "enabled", "4194305", "0", "0", "0", "0"]).is_err());
        assert!(d(&["sandbox-v3", "enabled", "400", "x", "0", "0", "0"]).is_err());
        assert!(d(&["sandbox-v3", "enabled", "400", "0", "2", "/a", "0"]).is_err());
        assert!(d(&["sandbox-v3", "enabled", "400", "0", "1", "rel", "0", "0"]).is_err());
        assert!(d(&["sandbox-v3", "enabled", "400", "1", "", "0", "0", "0"]).is_err());
        assert!(d(&["sandbox-v3", "enabled", "400", "0", "0", "0"]).is_err());
        assert!(d(&["sandbox-v3", "enabled", "400", "0", "0", "0", "0"]).is_ok());
        assert!(d(&["sandbox-v3", "enabled", "400", "1", "/a", "0", "0", "1", "/a"]).is_ok());
        assert!(d(&["sandbox-v3", "enabled", "400", "1", "/a", "0", "0", "1", "/b"]).is_err());
        assert!(
            d(&["sandbox-v3", "enabled", "400", "1", "/a", "0", "0", "2", "/a", "/a"]).is_err()
        );
    }
}
