//! Command-line interface: `serve`, `doctor`, `operations`, `approvals`, `instructions`,
//! `help`, `--version`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "codespace",
    version,
    about = "A model-free MCP server: deterministic, observable, policy-checked tools on registered workspaces.",
    disable_help_subcommand = false
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
#[expect(clippy::large_enum_variant, reason = "parsed once per process; boxing buys nothing")]
pub(crate) enum Command {
    /// Serve MCP on stdio (default) or Streamable HTTP (`--http`).
    Serve(ServeArgs),
    /// Print what this host can enforce and the effective registry.
    Doctor(DoctorArgs),
    /// Inspect the operation ledger and put preserved content back.
    #[command(subcommand)]
    Operations(OperationsCommand),
    /// List, show, grant and deny confirmation holds, on the ledger a server may be using.
    #[command(subcommand)]
    Approvals(ApprovalsCommand),
    /// Write an instruction for a work as the person, on the ledger a server may be using.
    #[command(subcommand)]
    Instructions(InstructionsCommand),
    /// Serve one gateway (`serve --runner-socket PATH`) as its runner: files and commands,
    /// never the ledger or the token. Ends, killing every command it started, when the
    /// gateway disconnects.
    Worker(WorkerArgs),
}

/// Where the runner runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum RunnerMode {
    /// In the server process.
    InProcess,
    /// In a worker process (this binary), over a private Unix socket.
    Uds,
}

#[derive(Debug, Args)]
pub(crate) struct WorkerArgs {
    /// The Unix socket to listen on (the path must not exist).
    #[arg(long, value_name = "PATH")]
    pub(crate) socket: std::path::PathBuf,
    /// The socket's permission bits, in octal: 0660 lets the members of --socket-group
    /// connect (a server run as another user). Others may never connect.
    #[arg(long, value_name = "MODE", default_value = "0600", value_parser = crate::runner::parse_socket_mode)]
    pub(crate) socket_mode: u32,
    /// The group that owns the socket (a name or a number); the worker's user must be a
    /// member. Default: the worker's own group.
    #[arg(long, value_name = "GROUP", value_parser = crate::runner::parse_group)]
    pub(crate) socket_group: Option<u32>,
    /// Where output beyond a command's in-memory ring spills (none: it is dropped, oldest
    /// first, and `output_lost` says so).
    #[arg(long, value_name = "DIR")]
    pub(crate) spill_dir: Option<std::path::PathBuf>,
    /// Die with this parent process (the server that started this worker).
    #[arg(long, value_name = "PID", hide = true)]
    pub(crate) owned_by: Option<u32>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ApprovalsCommand {
    /// List holds, newest first (id, state, workspace, tool, created, summary).
    List(ApprovalListArgs),
    /// Print one hold as JSON: its state, summary, and arguments while it is active.
    Show(ApprovalIdArgs),
    /// Grant a pending hold; the client runs it with operation_resume (exit status 3 when it
    /// is no longer pending).
    Grant(ApprovalIdArgs),
    /// Deny a pending hold for good (exit status 3 when it is no longer pending).
    Deny(ApprovalIdArgs),
}

#[derive(Debug, Subcommand)]
pub(crate) enum InstructionsCommand {
    /// Add an instruction at the end of a work's queue, recorded as written by the person
    /// (`person-cli`): a draft, or queued for the agent with `--queue`. Prints it as JSON
    /// (exit status 3 when the work does not exist or the text is refused).
    Add(InstructionAddArgs),
}

#[derive(Debug, Args)]
pub(crate) struct InstructionAddArgs {
    #[command(flatten)]
    pub(crate) ledger: LedgerArgs,
    /// The work (`work-...`).
    pub(crate) work_id: String,
    /// The instruction's text.
    pub(crate) body: String,
    /// follow_up (default), note or stop_notice.
    #[arg(long, value_parser = parse_word::<codespace_protocol::IntentKind>)]
    pub(crate) kind: Option<codespace_protocol::IntentKind>,
    /// next_checkpoint, after_current_work (default) or next_work.
    #[arg(long, value_parser = parse_word::<codespace_protocol::Delivery>)]
    pub(crate) delivery: Option<codespace_protocol::Delivery>,
    /// Queue it for the agent at once instead of leaving a draft.
    #[arg(long)]
    pub(crate) queue: bool,
}

fn parse_word<T: std::str::FromStr>(text: &str) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    text.parse::<T>().map_err(|e| e.to_string())
}

#[derive(Debug, Args)]
pub(crate) struct ApprovalListArgs {
    #[command(flatten)]
    pub(crate) ledger: LedgerArgs,
    /// Only holds of this workspace.
    #[arg(long, value_name = "ID")]
    pub(crate) workspace: Option<String>,
    /// Only holds in this state (pending, granted, queued, resuming, denied, consumed).
    #[arg(long, value_name = "STATE", value_parser = parse_state)]
    pub(crate) state: Option<codespace_store::ApprovalState>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    /// How many holds to list.
    #[arg(long, default_value_t = 50)]
    pub(crate) limit: usize,
}

fn parse_state(text: &str) -> Result<codespace_store::ApprovalState, String> {
    codespace_store::ApprovalState::parse(text).ok_or_else(|| {
        "expected one of pending, granted, queued, resuming, denied, consumed".to_owned()
    })
}

#[derive(Debug, Args)]
pub(crate) struct ApprovalIdArgs {
    #[command(flatten)]
    pub(crate) ledger: LedgerArgs,
    /// The hold id (`appr-...`).
    pub(crate) approval_id: String,
}

#[derive(Debug, Subcommand)]
pub(crate) enum OperationsCommand {
    /// List the newest operations, newest first (id, status, workspace, key, preserved
    /// files, and what each undo record keeps: bytes and age, or when it was pruned).
    List(ListArgs),
    /// Print one operation as JSON: status, plan, events, and any preserved content.
    Show(ShowArgs),
    /// Put the content an operation preserved in the undo log back where it belongs, wherever
    /// the path is free. Exit status 0: everything is in place (again, or already); 3: a path
    /// is occupied by other content or cannot be written, and nothing was overwritten.
    Restore(RestoreArgs),
    /// Revert an applied operation, as the operation_revert tool does (the same checks, the
    /// same all-or-nothing write, recorded in the ledger). Run it while no server writes to
    /// the workspace. Exit status 0: reverted (or checked); 3: refused, with its code and
    /// nothing written.
    Revert(RevertArgs),
}

#[derive(Debug, Args)]
pub(crate) struct RevertArgs {
    #[command(flatten)]
    pub(crate) registry: RegistryArgs,
    #[command(flatten)]
    pub(crate) ledger: LedgerArgs,
    /// The operation id (`op-...`).
    pub(crate) operation_id: String,
    /// Check and plan the revert; write nothing.
    #[arg(long)]
    pub(crate) check_only: bool,
}

#[derive(Debug, Args)]
pub(crate) struct LedgerArgs {
    /// Operation ledger (SQLite) path, as given to `serve`. Default: in the state directory.
    #[arg(long, env = "CODESPACE_OPERATIONS_DB", value_name = "PATH")]
    pub(crate) operations_db: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    pub(crate) ledger: LedgerArgs,
    /// How many operations to list.
    #[arg(long, default_value_t = 50)]
    pub(crate) limit: usize,
}

#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    #[command(flatten)]
    pub(crate) ledger: LedgerArgs,
    /// The operation id (`op-...`).
    pub(crate) operation_id: String,
}

#[derive(Debug, Args)]
pub(crate) struct RestoreArgs {
    #[command(flatten)]
    pub(crate) registry: RegistryArgs,
    #[command(flatten)]
    pub(crate) ledger: LedgerArgs,
    /// The operation id (`op-...`).
    pub(crate) operation_id: String,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct RegistryArgs {
    /// Workspace registry (JSON). Without it, the current directory is workspace `default`.
    #[arg(long, env = "CODESPACE_CONFIG", value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Zero-config only: make workspace `default` workspace-write instead of read-only.
    #[arg(long)]
    pub(crate) write: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    pub(crate) registry: RegistryArgs,
    /// Serve Streamable HTTP at /mcp instead of stdio.
    #[arg(long)]
    pub(crate) http: bool,
    /// HTTP bind host.
    #[arg(long, env = "CODESPACE_HTTP_HOST", default_value = "127.0.0.1")]
    pub(crate) host: String,
    /// HTTP bind port (0 picks a free port; the bound address is printed on stderr).
    #[arg(long, env = "CODESPACE_HTTP_PORT", default_value_t = 8787)]
    pub(crate) port: u16,
    /// Bearer token required on every HTTP request.
    #[arg(long, env = "CODESPACE_HTTP_TOKEN", hide_env_values = true, conflicts_with_all = ["token_file", "no_auth"])]
    pub(crate) token: Option<String>,
    /// Read the bearer token from this file (first line, trimmed).
    #[arg(long, value_name = "FILE", conflicts_with = "no_auth")]
    pub(crate) token_file: Option<PathBuf>,
    /// Accept HTTP requests to /mcp without a token (loopback binds only; /inbox still
    /// needs the person token).
    #[arg(long)]
    pub(crate) no_auth: bool,
    /// The person's token for /inbox (the page and its API), which the MCP bearer token
    /// never stands in for; must differ from it. Default: generated, written to
    /// `person-token-<port>` in the state directory (0600) and removed at stop.
    #[arg(
        long,
        env = "CODESPACE_PERSON_TOKEN",
        hide_env_values = true,
        conflicts_with = "person_token_file"
    )]
    pub(crate) person_token: Option<String>,
    /// Read the person's token for /inbox from this file (first line, trimmed).
    #[arg(long, value_name = "FILE")]
    pub(crate) person_token_file: Option<PathBuf>,
    /// Extra accepted Host header value (repeatable): NAME accepts NAME and
    /// NAME:<bound port>, NAME:PORT exactly that (the Host a router or ingress sends). Loopback names are
    /// always accepted; every other Host is refused (DNS-rebinding protection).
    #[arg(long = "allowed-host", value_name = "NAME")]
    pub(crate) allowed_hosts: Vec<String>,
    /// `/metrics` takes the MCP bearer token too. By default it takes none (a scraper
    /// usually has none) and answers only counts, never a path, argument or output.
    #[arg(long)]
    pub(crate) metrics_token: bool,
    /// On SIGTERM (or SIGINT), how long the server may drain before it exits: new patches
    /// and commands are refused (SERVER_DRAINING) and /readyz answers 503 at once, patches
    /// under way finish, commands get their grace, the ledger is flushed, then exit 0. Below
    /// a pod's default 30 s grace period.
    #[arg(
        long,
        env = "CODESPACE_DRAIN_TIMEOUT_SECS",
        value_name = "SECS",
        default_value_t = 20,
        value_parser = clap::value_parser!(u64).range(1..=3600)
    )]
    pub(crate) drain_timeout_secs: u64,
    /// Accepted Origin header value, exact match (repeatable); loopback origins on the bound
    /// port are always accepted.
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    pub(crate) allowed_origins: Vec<String>,
    /// Operation ledger (SQLite) path, or `:memory:`. Default: in the state directory.
    #[arg(long, env = "CODESPACE_OPERATIONS_DB", value_name = "PATH")]
    pub(crate) operations_db: Option<String>,
    /// How long a finished operation's undo record (what operation_revert and `operations
    /// restore` put back) is kept, in seconds; older records are dropped, oldest first.
    #[arg(
        long,
        env = "CODESPACE_UNDO_MAX_AGE_SECS",
        value_name = "SECS",
        default_value_t = 604_800,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub(crate) undo_max_age_secs: u64,
    /// The most bytes all kept undo records may hold together; the oldest are dropped
    /// first (0 keeps none once an operation has finished).
    #[arg(
        long,
        env = "CODESPACE_UNDO_MAX_BYTES",
        value_name = "BYTES",
        default_value_t = 268_435_456
    )]
    pub(crate) undo_max_bytes: u64,
    /// How long a held call waits for a person's answer when the client supports
    /// elicitation; then the hold stays pending and the call returns APPROVAL_REQUIRED. On
    /// MCP 2026-07-28, how long a question's requestState stays valid.
    #[arg(
        long,
        env = "CODESPACE_ELICITATION_TIMEOUT_SECS",
        value_name = "SECS",
        default_value_t = 600,
        value_parser = clap::value_parser!(u64).range(1..=86_400)
    )]
    pub(crate) elicitation_timeout_secs: u64,
    /// Start no workspace watcher: no caches (every answer from the disk), and `changes`
    /// always says resync_required.
    #[arg(long)]
    pub(crate) no_watch: bool,
    /// Where files are read and commands run: in this process, or in a worker process
    /// over a Unix socket (`uds`).
    #[arg(long, env = "CODESPACE_RUNNER", value_enum, default_value = "in-process")]
    pub(crate) runner: RunnerMode,
    /// With `--runner uds`: the directory under which the worker's private socket
    /// directory is made (default: the state directory).
    #[arg(long, env = "CODESPACE_RUNNER_DIR", value_name = "DIR")]
    pub(crate) runner_dir: Option<std::path::PathBuf>,
    /// Connect to a worker started separately (`codespace worker --socket PATH`, for
    /// instance as another user) instead of starting one.
    #[arg(
        long,
        env = "CODESPACE_RUNNER_SOCKET",
        value_name = "PATH",
        conflicts_with = "runner_dir"
    )]
    pub(crate) runner_socket: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    #[command(flatten)]
    pub(crate) registry: RegistryArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}
