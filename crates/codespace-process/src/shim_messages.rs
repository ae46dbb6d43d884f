//! The supervisor ⇄ reaper-shim protocol: the shim's arguments and its report lines.
//!
//! # Arguments
//! The spawn helper forks a shim with these arguments (see `reaper/helper.rs`: it then
//! substitutes its own pid and the descriptor numbers the shim received); without it the
//! supervisor runs `<reaper_exe> <reaper_arg>` followed by long options, each with its
//! value after `=`, then `--` and the command's argv; [`crate::reaper_main`] receives
//! everything after `<reaper_arg>` and parses it with clap, so a malformed invocation is
//! refused with the option and the reason (exit [`EXIT_BAD_ARGS`]):
//! - `--protocol=v5`: the protocol version; anything else is refused.
//! - `--ppid=<pid>`: the supervisor's pid (non-zero). The shim arms
//!   `PR_SET_PDEATHSIG(SIGTERM)` and then checks that its parent is still this pid, so a
//!   supervisor that died before the arming cannot leave the command running.
//! - `--report-fd=<fd>`: the descriptor (3 or above) the report pipe's write end is
//!   inherited on. Passing its number, rather than moving it in a pre-exec hook, lets the
//!   supervisor start pipe-mode shims with `posix_spawn` (no fork of the server's address
//!   space).
//! - `--cwd-fd=<fd>`: a directory descriptor (3 or above, not the report descriptor)
//!   inherited the same way: the shim's first act is `fchdir` onto it, so the command's
//!   working directory is the directory the supervisor was handed (a workspace root opened
//!   at start), never looked up by path at spawn time.
//! - `--mode=pipe` or `--mode=tty`: in `tty` mode the shim's stdio is the terminal and the
//!   command's process group is made the terminal's foreground group.
//! - `--no-sandbox`, or one `--sandbox-arg=<arg>` per word of a [`SandboxPolicy`] in its
//!   argv encoding (`sandbox-v3 <restricted|enabled> <max_pids>` and four path lists, see
//!   [`SandboxPolicy::to_args`]); exactly one of the two forms. With a policy the shim forks
//!   and calls [`codespace_sandbox::launch`], which builds the command's namespaces and root
//!   and execs it; if any step fails the command does not run and the shim reports `failed`.
//! - `--search-path=<PATH>`: the child's `PATH`. `argv[0]` is looked up on it the way
//!   `execvp` would (relative entries, and a relative `argv[0]` containing `/`, against the
//!   command's working directory): by the shim, already in that directory, without a
//!   sandbox; by the launcher inside the private root with one, so only what the command
//!   can see matches. A program that is not found is reported as `failed` (sandboxed, with
//!   the `PATH` entries the host has but the sandbox hides).
//! - `-- <argv0> [args…]`: the command's argv exactly as requested (at least `argv0`).
//!
//! # Descriptors
//! fd 0-2 are the command's stdio (pipes, or the terminal). The shim enters `<cwd_fd>` and
//! closes it with every other descriptor above 2 but the report pipe; it moves the report
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
use std::num::NonZeroU32;

use clap::Parser as _;
use codespace_sandbox::SandboxPolicy;

/// Protocol version, the value of `--protocol`.
pub(crate) const VERSION: &str = "v5";
/// The shim could not start the command (also sent as a `failed` report).
pub(crate) const EXIT_SPAWN_FAILED: i32 = 127;
/// The supervisor was gone before the shim armed its parent-death signal.
pub(crate) const EXIT_ORPHANED: i32 = 125;
/// The shim was invoked with arguments it does not understand.
pub(crate) const EXIT_BAD_ARGS: i32 = 124;

/// The decoded shim arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShimArgs {
    pub(crate) ppid: u32,
    /// The descriptor the shim inherits its report pipe on (moved to fd 3 at once).
    pub(crate) report_fd: i32,
    /// The directory descriptor the shim inherits and enters (then closes).
    pub(crate) cwd_fd: i32,
    pub(crate) tty: bool,
    pub(crate) sandbox: Option<SandboxPolicy>,
    /// The child's `PATH`, on which `argv[0]` is looked up.
    pub(crate) search_path: OsString,
    pub(crate) argv: Vec<OsString>,
}

/// The shim's command line as clap sees it (see the module docs).
#[derive(Debug, clap::Parser)]
#[command(name = "codespace-reaper", no_binary_name = true)]
#[command(disable_help_flag = true, disable_version_flag = true)]
#[command(group(
    clap::ArgGroup::new("confinement").required(true).args(["no_sandbox", "sandbox_args"])
))]
struct Cli {
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new([VERSION]))]
    protocol: String,
    #[arg(long)]
    ppid: NonZeroU32,
    #[arg(long, value_parser = clap::value_parser!(i32).range(3..))]
    report_fd: i32,
    #[arg(long, value_parser = clap::value_parser!(i32).range(3..))]
    cwd_fd: i32,
    #[arg(long, value_enum)]
    mode: Mode,
    #[arg(long)]
    no_sandbox: bool,
    #[arg(long = "sandbox-arg", allow_hyphen_values = true)]
    sandbox_args: Vec<OsString>,
    #[arg(long, allow_hyphen_values = true)]
    search_path: OsString,
    #[arg(last = true, required = true)]
    argv: Vec<OsString>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Mode {
    Pipe,
    Tty,
}

impl ShimArgs {
    pub(crate) fn encode(&self) -> Vec<OsString> {
        let mode = if self.tty { Mode::Tty } else { Mode::Pipe };
        let mut out: Vec<OsString> = vec![
            format!("--protocol={VERSION}").into(),
            format!("--ppid={}", self.ppid).into(),
            format!("--report-fd={}", self.report_fd).into(),
            format!("--cwd-fd={}", self.cwd_fd).into(),
            format!("--mode={}", mode.as_str()).into(),
        ];
        match &self.sandbox {
            None => out.push("--no-sandbox".into()),
            Some(policy) => {
                out.extend(policy.to_args().into_iter().map(|a| option("--sandbox-arg=", a)));
            }
        }
        out.push(option("--search-path=", self.search_path.clone()));
        out.push("--".into());
        out.extend(self.argv.iter().cloned());
        out
    }

    pub(crate) fn decode(args: Vec<OsString>) -> Result<Self, String> {
        let cli = Cli::try_parse_from(args).map_err(|e| e.to_string().trim_end().to_owned())?;
        let sandbox = match (cli.no_sandbox, cli.sandbox_args.is_empty()) {
            (true, true) => None,
            (false, false) => Some(decode_policy(cli.sandbox_args)?),
            // The argument group already refuses both and neither; fail closed regardless.
            (true, false) | (false, true) => {
                return Err("exactly one of --no-sandbox and --sandbox-arg".into());
            }
        };
        if cli.cwd_fd == cli.report_fd {
            return Err("--cwd-fd and --report-fd must differ".into());
        }
        let tty = match cli.mode {
            Mode::Pipe => false,
            Mode::Tty => true,
        };
        Ok(Self {
            ppid: cli.ppid.get(),
            report_fd: cli.report_fd,
            cwd_fd: cli.cwd_fd,
            tty,
            sandbox,
            search_path: cli.search_path,
            argv: cli.argv,
        })
    }
}

impl Mode {
    fn as_str(self) -> &'static str {
        match self {
            Self::Pipe => "pipe",
            Self::Tty => "tty",
        }
    }
}

/// `--name=value` for a value that need not be UTF-8.
fn option(name: &str, value: OsString) -> OsString {
    let mut out = OsString::from(name);
    out.push(value);
    out
}

/// A policy from its argv encoding, which must be consumed whole.
fn decode_policy(args: Vec<OsString>) -> Result<SandboxPolicy, String> {
    let mut it = args.into_iter();
    let policy = SandboxPolicy::from_args(&mut it)?;
    match it.next() {
        None => Ok(policy),
        Some(extra) => Err(format!("unexpected sandbox argument {extra:?}")),
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
            cwd_fd: 8,
            tty: true,
            sandbox: None,
            search_path: "/usr/bin:bin::-odd".into(),
            argv: vec!["printf".into(), "%s\n".into(), "a b".into(), "--".into(), "-x".into()],
        };
        assert_eq!(ShimArgs::decode(a.encode()), Ok(a.clone()));
        let p = ShimArgs { tty: false, search_path: "".into(), ..a.clone() };
        assert_eq!(ShimArgs::decode(p.encode()), Ok(p));
        for network in [NetworkPolicy::Restricted, NetworkPolicy::Enabled] {
            let s = ShimArgs {
                sandbox: Some(SandboxPolicy {
                    read_roots: vec!["/opt/x".into()],
                    writable_roots: vec!["/w/one".into(), "/w/t wo".into()],
                    masked: vec![],
                    network,
                    max_pids: 512,
                    workdir: Some("/w/one".into()),
                }),
                ..a.clone()
            };
            assert_eq!(ShimArgs::decode(s.encode()), Ok(s));
        }
    }

    #[test]
    fn args_refuse_malformed() {
        let v = |s: &[&str]| s.iter().map(OsString::from).collect::<Vec<_>>();
        let args = |replace: &str, with: Option<&str>| {
            let mut out: Vec<&str> = vec![
                "--protocol=v5",
                "--ppid=1",
                "--report-fd=3",
                "--cwd-fd=4",
                "--mode=pipe",
                "--no-sandbox",
                "--search-path=/bin",
                "--",
                "true",
            ];
            match out.iter().position(|a| a.starts_with(replace)) {
                Some(i) => match with {
                    Some(w) => out[i] = w,
                    None => drop(out.remove(i)),
                },
                None => panic!("{replace}"),
            }
            v(&out)
        };
        assert!(ShimArgs::decode(v(&[])).is_err());
        assert!(ShimArgs::decode(args("--protocol", Some("--protocol=v4"))).is_err());
        assert!(ShimArgs::decode(args("--cwd-fd", Some("--cwd-fd=3"))).is_err());
        assert!(ShimArgs::decode(args("--cwd-fd", Some("--cwd-fd=2"))).is_err());
        assert!(ShimArgs::decode(args("--cwd-fd", None)).is_err());
        assert!(ShimArgs::decode(args("--ppid", Some("--ppid=0"))).is_err());
        assert!(ShimArgs::decode(args("--ppid", Some("--ppid=x"))).is_err());
        assert!(ShimArgs::decode(args("--report-fd", Some("--report-fd=2"))).is_err());
        assert!(ShimArgs::decode(args("--report-fd", Some("--report-fd=x"))).is_err());
        assert!(ShimArgs::decode(args("--mode", Some("--mode=pty"))).is_err());
        assert!(ShimArgs::decode(args("true", None)).is_err());
        assert!(ShimArgs::decode(args("--no-sandbox", None)).is_err());
        assert!(ShimArgs::decode(args("--search-path", None)).is_err());
        assert!(ShimArgs::decode(args("--", None)).is_err());
        let sandboxed = |network: &str, extra: &[&str]| {
            let mut out = args("--no-sandbox", Some("--sandbox-arg=sandbox-v3"));
            let words = [network, "400", "0", "0", "0", "0"];
            for (i, w) in words.iter().chain(extra).enumerate() {
                out.insert(6 + i, format!("--sandbox-arg={w}").into());
            }
            out
        };
        assert!(ShimArgs::decode(sandboxed("open", &[])).is_err());
        assert!(ShimArgs::decode(sandboxed("enabled", &["extra"])).is_err());
        assert!(ShimArgs::decode(sandboxed("enabled", &[])).is_ok());
        let mut both = sandboxed("enabled", &[]);
        both.insert(0, "--no-sandbox".into());
        assert!(ShimArgs::decode(both).is_err());
        assert!(ShimArgs::decode(args("--protocol", Some("--protocol=v5"))).is_ok());
    }

    #[test]
    fn arg_errors_name_the_option() {
        let err = |a: &[&str]| {
            ShimArgs::decode(a.iter().map(OsString::from).collect()).err().unwrap_or_default()
        };
        let base = [
            "--protocol=v5",
            "--ppid=0",
            "--report-fd=3",
            "--cwd-fd=4",
            "--mode=pipe",
            "--no-sandbox",
        ];
        let msg = err(&[&base[..], &["--search-path=/bin", "--", "true"]].concat());
        assert!(msg.contains("--ppid"), "{msg}");
        let msg = err(&["--protocol=v4"]);
        assert!(msg.contains("--protocol") && msg.contains("v5"), "{msg}");
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
