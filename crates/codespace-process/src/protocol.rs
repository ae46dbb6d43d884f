//! The supervisor ⇄ reaper-shim protocol: the shim's arguments and its report lines.
//!
//! # Arguments
//! The supervisor runs
//! `<reaper_exe> <reaper_arg> v3 <ppid> <report_fd> <pipe|tty> <sandbox> <exe> <argv0> [args…]`.
//! [`crate::reaper_main`] receives everything after `<reaper_arg>`:
//! - `v3`: the protocol version; anything else is refused (exit [`EXIT_BAD_ARGS`]).
//! - `<ppid>`: the supervisor's pid. The shim arms `PR_SET_PDEATHSIG(SIGTERM)` and then
//!   checks that its parent is still this pid, so a supervisor that died before the arming
//!   cannot leave the command running.
//! - `<report_fd>`: the descriptor (3 or above) the report pipe's write end is inherited
//!   on. Passing its number, rather than moving it in a pre-exec hook, lets the supervisor
//!   start pipe-mode shims with `posix_spawn` (no fork of the server's address space).
//! - `pipe` or `tty`: in `tty` mode the shim's stdio is the terminal and the command's
//!   process group is made the terminal's foreground group.
//! - `<sandbox>`: `none`, or a [`SandboxPolicy`] in its argv encoding
//!   (`sandbox-v2 <restricted|enabled> <max_pids>` and three path lists, see
//!   [`SandboxPolicy::to_args`]). With a policy the shim forks and calls
//!   [`codespace_sandbox::launch`], which builds the command's namespaces and root and
//!   execs it; if any step fails the command does not run and the shim reports `failed`.
//! - `<exe>`: the program, already resolved on the child's `PATH` by the supervisor.
//! - `<argv0> [args…]`: the command's argv exactly as requested.
//!
//! # Descriptors
//! fd 0-2 are the command's stdio (pipes, or the terminal). The shim moves the report
//! pipe's write end from `<report_fd>` to fd 3, marks it close-on-exec and closes every fd
//! above it, so the command itself sees only 0-2. In pipe mode the shim makes itself a
//! session leader first thing (in tty mode the PTY spawn already did, with the terminal as
//! its controlling terminal).
//!
//! # Reports
//! One line each on fd 3, in this order: `started <pid>` or `failed <errno> <message>`,
//! then `exit <code> <requested>` or `signal <number> <requested>` once the command's main
//! process is reaped. `<requested>` is `1` when a kill request (SIGTERM, SIGHUP, SIGINT or
//! SIGQUIT to the shim) arrived before the main process was reaped. The shim then kills
//! and reaps every remaining descendant and exits; end of file on fd 3 (the shim's exit)
//! means the whole tree is gone.
//!
//! # Exit status of the shim
//! Informational only (the supervisor trusts the reports): the command's exit code, or
//! 128 + its signal, [`EXIT_SPAWN_FAILED`] when the command could not be started,
//! [`EXIT_ORPHANED`] when the supervisor was already gone, [`EXIT_BAD_ARGS`] for a
//! malformed invocation.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt as _;
use std::path::PathBuf;

use codespace_sandbox::SandboxPolicy;

/// Protocol version tag, the first shim argument.
pub(crate) const VERSION: &str = "v3";
/// The `<sandbox>` argument when the command runs unsandboxed.
const NO_SANDBOX: &str = "none";
/// The shim could not start the command (also sent as a `failed` report).
pub const EXIT_SPAWN_FAILED: i32 = 127;
/// The supervisor was gone before the shim armed its parent-death signal.
pub const EXIT_ORPHANED: i32 = 125;
/// The shim was invoked with arguments it does not understand.
pub const EXIT_BAD_ARGS: i32 = 124;

/// The decoded shim arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShimArgs {
    pub(crate) ppid: u32,
    /// The descriptor the shim inherits its report pipe on (moved to fd 3 at once).
    pub(crate) report_fd: i32,
    pub(crate) tty: bool,
    pub(crate) sandbox: Option<SandboxPolicy>,
    pub(crate) exe: PathBuf,
    pub(crate) argv: Vec<OsString>,
}

impl ShimArgs {
    pub(crate) fn encode(&self) -> Vec<OsString> {
        let mut out: Vec<OsString> = vec![
            VERSION.into(),
            self.ppid.to_string().into(),
            self.report_fd.to_string().into(),
            if self.tty { "tty" } else { "pipe" }.into(),
        ];
        match &self.sandbox {
            None => out.push(NO_SANDBOX.into()),
            Some(policy) => out.extend(policy.to_args()),
        }
        out.push(self.exe.clone().into_os_string());
        out.extend(self.argv.iter().cloned());
        out
    }

    pub(crate) fn decode(args: Vec<OsString>) -> Result<Self, String> {
        let mut it = args.into_iter();
        let version = it.next().ok_or("missing protocol version")?;
        if version.as_bytes() != VERSION.as_bytes() {
            return Err(format!("unsupported protocol {version:?}, expected {VERSION}"));
        }
        let ppid = it
            .next()
            .and_then(|p| p.to_str().and_then(|p| p.parse::<u32>().ok()))
            .filter(|p| *p > 0)
            .ok_or("missing or invalid parent pid")?;
        let report_fd = it
            .next()
            .and_then(|p| p.to_str().and_then(|p| p.parse::<i32>().ok()))
            .filter(|fd| *fd >= 3)
            .ok_or("missing or invalid report descriptor (at least 3)")?;
        let tty = match it.next().as_ref().map(|m| m.as_bytes()) {
            Some(b"tty") => true,
            Some(b"pipe") => false,
            _ => return Err("mode must be pipe or tty".into()),
        };
        let first = it.next().ok_or("missing sandbox policy")?;
        let sandbox = if first.as_bytes() == NO_SANDBOX.as_bytes() {
            None
        } else {
            Some(SandboxPolicy::from_args(&mut std::iter::once(first).chain(it.by_ref()))?)
        };
        let exe = PathBuf::from(it.next().ok_or("missing executable")?);
        let argv: Vec<OsString> = it.collect();
        if argv.is_empty() {
            return Err("missing argv".into());
        }
        Ok(Self { ppid, report_fd, tty, sandbox, exe, argv })
    }
}

/// One line the shim writes on its report descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ShimReport {
    Started { pid: u32 },
    Failed { errno: i32, message: String },
    Exited { code: i32, requested: bool },
    Signaled { signal: i32, requested: bool },
}

impl ShimReport {
    pub(crate) fn encode(&self) -> String {
        match self {
            Self::Started { pid } => format!("started {pid}\n"),
            Self::Failed { errno, message } => {
                let message: String =
                    message.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
                format!("failed {errno} {message}\n")
            }
            Self::Exited { code, requested } => format!("exit {code} {}\n", u8::from(*requested)),
            Self::Signaled { signal, requested } => {
                format!("signal {signal} {}\n", u8::from(*requested))
            }
        }
    }

    pub(crate) fn parse(line: &str) -> Option<Self> {
        let line = line.strip_suffix('\n').unwrap_or(line);
        let (kind, rest) = line.split_once(' ')?;
        match kind {
            "started" => Some(Self::Started { pid: rest.parse().ok()? }),
            "failed" => {
                let (errno, message) = rest.split_once(' ').unwrap_or((rest, ""));
                Some(Self::Failed { errno: errno.parse().ok()?, message: message.to_owned() })
            }
            "exit" | "signal" => {
                let (value, requested) = rest.split_once(' ')?;
                let value: i32 = value.parse().ok()?;
                let requested = match requested {
                    "1" => true,
                    "0" => false,
                    _ => return None,
                };
                Some(if kind == "exit" {
                    Self::Exited { code: value, requested }
                } else {
                    Self::Signaled { signal: value, requested }
                })
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use codespace_sandbox::NetworkPolicy;

    use super::*;

    #[test]
    fn args_round_trip() {
        let a = ShimArgs {
            ppid: 42,
            report_fd: 7,
            tty: true,
            sandbox: None,
            exe: "/usr/bin/printf".into(),
            argv: vec!["printf".into(), "%s\n".into(), "a b".into()],
        };
        assert_eq!(ShimArgs::decode(a.encode()), Ok(a.clone()));
        let p = ShimArgs { tty: false, ..a.clone() };
        assert_eq!(ShimArgs::decode(p.encode()), Ok(p));
        for network in [NetworkPolicy::Restricted, NetworkPolicy::Enabled] {
            let s = ShimArgs {
                sandbox: Some(SandboxPolicy {
                    read_roots: vec!["/opt/x".into()],
                    writable_roots: vec!["/w/one".into(), "/w/t wo".into()],
                    masked: vec![],
                    network,
                    max_pids: 512,
                }),
                ..a.clone()
            };
            assert_eq!(ShimArgs::decode(s.encode()), Ok(s));
        }
    }

    #[test]
    fn args_refuse_malformed() {
        let v = |s: &[&str]| s.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(ShimArgs::decode(v(&[])).is_err());
        assert!(ShimArgs::decode(v(&["v2", "1", "pipe", "none", "/bin/true", "true"])).is_err());
        assert!(ShimArgs::decode(v(&["v3", "0", "3", "pipe", "none", "/bin/true", "t"])).is_err());
        assert!(ShimArgs::decode(v(&["v3", "x", "3", "pipe", "none", "/bin/true", "t"])).is_err());
        assert!(ShimArgs::decode(v(&["v3", "1", "2", "pipe", "none", "/bin/true", "t"])).is_err());
        assert!(ShimArgs::decode(v(&["v3", "1", "x", "pipe", "none", "/bin/true", "t"])).is_err());
        assert!(ShimArgs::decode(v(&["v3", "1", "3", "pty", "none", "/bin/true", "t"])).is_err());
        assert!(ShimArgs::decode(v(&["v3", "1", "3", "pipe", "none", "/bin/true"])).is_err());
        assert!(ShimArgs::decode(v(&["v3", "1", "3", "pipe", "/bin/true", "true"])).is_err());
        let bad =
            ["v3", "1", "9", "pipe", "sandbox-v2", "open", "400", "0", "0", "0", "/bin/true", "t"];
        assert!(ShimArgs::decode(v(&bad)).is_err());
        let ok = [
            "v3",
            "1",
            "9",
            "pipe",
            "sandbox-v2",
            "enabled",
            "400",
            "0",
            "0",
            "0",
            "/bin/true",
            "t",
        ];
        assert!(ShimArgs::decode(v(&ok)).is_ok());
    }

    #[test]
    fn reports_round_trip() {
        for r in [
            ShimReport::Started { pid: 7 },
            ShimReport::Failed { errno: 2, message: "No such file or directory".into() },
            ShimReport::Failed { errno: 13, message: String::new() },
            ShimReport::Exited { code: 0, requested: false },
            ShimReport::Exited { code: 255, requested: true },
            ShimReport::Signaled { signal: 9, requested: true },
            ShimReport::Signaled { signal: 15, requested: false },
        ] {
            assert_eq!(ShimReport::parse(&r.encode()), Some(r));
        }
        let f = ShimReport::Failed { errno: 1, message: "a\nb".into() }.encode();
        assert_eq!(f.matches('\n').count(), 1);
        assert_eq!(ShimReport::parse("exit 1 2\n"), None);
        assert_eq!(ShimReport::parse("bogus 1\n"), None);
        assert_eq!(ShimReport::parse("started\n"), None);
    }
}
