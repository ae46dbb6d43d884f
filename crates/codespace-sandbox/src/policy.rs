//! The policy a command runs under, and its argv encoding (it crosses the reaper shim's
//! command line, so it is a list of arguments rather than one string: paths may hold any
//! byte but NUL).

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt as _;
use std::path::PathBuf;

/// Whether the command may use the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

/// What a sandboxed command may do. Everything is readable and executable; only the
/// `writable_roots` (and the devices `/dev/null`, `/dev/tty`, `/dev/ptmx`, `/dev/pts`) are
/// writable.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SandboxPolicy {
    /// Absolute directories the command may write beneath. Empty: the read-only profile.
    pub writable_roots: Vec<PathBuf>,
    /// The network policy.
    pub network: NetworkPolicy,
}

/// The first token of an encoded policy.
const TAG: &str = "sandbox-v1";

impl SandboxPolicy {
    /// The argv encoding: `sandbox-v1 <restricted|enabled> <n> <root 1> … <root n>`.
    pub fn to_args(&self) -> Vec<OsString> {
        let mut out: Vec<OsString> = vec![
            TAG.into(),
            self.network.as_str().into(),
            self.writable_roots.len().to_string().into(),
        ];
        out.extend(self.writable_roots.iter().map(|p| p.clone().into_os_string()));
        out
    }

    /// Decodes [`Self::to_args`] from the front of `args`, consuming exactly the policy's
    /// arguments. Refuses a relative or empty root.
    pub fn from_args(args: &mut impl Iterator<Item = OsString>) -> Result<Self, String> {
        let tag = args.next().ok_or("missing sandbox policy")?;
        if tag.as_bytes() != TAG.as_bytes() {
            return Err(format!("unsupported sandbox policy {tag:?}, expected {TAG}"));
        }
        let network = args
            .next()
            .and_then(|n| NetworkPolicy::parse(n.as_bytes()))
            .ok_or("network must be restricted or enabled")?;
        let count = args
            .next()
            .and_then(|n| n.to_str().and_then(|n| n.parse::<usize>().ok()))
            .filter(|n| *n <= 4096)
            .ok_or("missing or invalid writable root count")?;
        let mut writable_roots = Vec::with_capacity(count);
        for _ in 0..count {
            let root = PathBuf::from(args.next().ok_or("missing writable root")?);
            if !root.is_absolute() {
                return Err(format!("writable root {} is not absolute", root.display()));
            }
            writable_roots.push(root);
        }
        Ok(Self { writable_roots, network })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_round_trip() {
        for p in [
            SandboxPolicy { writable_roots: vec![], network: NetworkPolicy::Restricted },
            SandboxPolicy {
                writable_roots: vec!["/w/a b".into(), "/tmp/x\ny".into()],
                network: NetworkPolicy::Enabled,
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
        assert!(d(&["sandbox-v0", "enabled", "0"]).is_err());
        assert!(d(&["sandbox-v1", "open", "0"]).is_err());
        assert!(d(&["sandbox-v1", "enabled", "x"]).is_err());
        assert!(d(&["sandbox-v1", "enabled", "2", "/a"]).is_err());
        assert!(d(&["sandbox-v1", "enabled", "1", "rel"]).is_err());
        assert!(d(&["sandbox-v1", "enabled", "1", ""]).is_err());
        assert!(d(&["sandbox-v1", "enabled", "0"]).is_ok());
    }
}
