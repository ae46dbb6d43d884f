//! The server: parses the command line, builds the gateway, and serves MCP on stdio or
//! Streamable HTTP. Logs go to stderr; stdout belongs to the stdio transport. The binary
//! `codespace` is [`main`]; the in-process tests use the HTTP router ([`http::router`]) and
//! the MCP handler ([`mcp::CodeSpace`]) directly.

mod approvals;
mod cli;
mod config;
mod doctor;
mod drain;
mod elicit;
#[cfg(feature = "conformance-fixtures")]
mod fixtures;
mod frame;
mod hangup;
pub mod health;
pub mod http;
mod http_batch;
mod http_body;
mod http_json;
mod inbox;
mod instructions;
mod instructions_cli;
mod listen;
mod logging;
pub mod mcp;
pub mod metrics;
mod mrtr;
mod operations;
mod person;
mod process_env;
mod runner;
mod server_key;
mod signals;
mod stdio;
#[cfg(feature = "conformance-fixtures")]
mod task_fixtures;
mod tasks;
mod tools;
mod trace;

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use codespace_gateway::{Gateway, GatewayConfig, Workspaces};
use codespace_runner::WorkerFaults;
use codespace_store::Store;
use rmcp::ServiceExt;

use crate::cli::{Cli, Command, ServeArgs};
use crate::config::UsageError;

/// Test faults a command arms. The `codespace` binary arms none ([`main`]); only a test-only
/// target (the `fault-server` example) builds them, from its environment.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    /// What this process does wrong when it runs as a runner worker.
    pub worker: WorkerFaults,
    /// Variables given to a runner worker this process starts (beside the usual ones), so
    /// that it arms the same faults.
    pub worker_env: Vec<(String, std::ffi::OsString)>,
}

/// The whole `codespace` command: its roles, then the exit status. No fault is armed.
pub fn main() -> ExitCode {
    main_with(Faults::default())
}

/// [`main`] with `faults` armed: for test-only targets.
pub fn main_with(faults: Faults) -> ExitCode {
    // The hidden reaper role (one per command) must start before any thread or runtime.
    let mut args = std::env::args_os();
    if args.nth(1).is_some_and(|a| a == codespace_process::REAPER_ARG) {
        codespace_process::reaper_main(args.collect());
    }
    let cli = Cli::parse();
    logging::init();
    let result = match cli.command {
        Command::Doctor(args) => doctor(args),
        Command::Serve(args) => serve(args, &faults.worker_env),
        Command::Operations(command) => operations::run(command),
        Command::Approvals(command) => approvals::run(command),
        Command::Instructions(command) => instructions_cli::run(command),
        Command::Worker(args) => runner::worker(args, faults.worker),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(e)) => {
            eprintln!("codespace: {e}");
            ExitCode::from(2)
        }
        Err(Failure::Runtime(e)) => {
            eprintln!("codespace: {e}");
            ExitCode::from(1)
        }
        Err(Failure::Refused(e)) => {
            eprintln!("codespace: {e}");
            ExitCode::from(3)
        }
    }
}

enum Failure {
    /// Bad flags, environment or registry: exit status 2.
    Usage(UsageError),
    /// Failure while serving: exit status 1.
    Runtime(String),
    /// An operator command that would have overwritten something, or acted on an operation
    /// that is not finished, did nothing instead: exit status 3.
    Refused(String),
}

impl From<UsageError> for Failure {
    fn from(e: UsageError) -> Self {
        Failure::Usage(e)
    }
}

fn doctor(args: cli::DoctorArgs) -> Result<(), Failure> {
    let (registry, source) = config::load_registry(&args.registry)?;
    let probe = codespace_sandbox::probe();
    let text = doctor::report(&probe, &registry, &source, args.json);
    std::io::stdout()
        .write_all(text.as_bytes())
        .map_err(|e| Failure::Runtime(format!("stdout: {e}")))?;
    // The checks `serve` makes before it starts, with the same messages and exit status.
    let at_fault = |e: codespace_gateway::StartError| {
        UsageError(format!("{}: {e}", config_name(&args.registry)))
    };
    let workspaces = Workspaces::open(&registry).map_err(at_fault)?;
    // Never started: it only lets the runner open the roots as `serve` would.
    let (supervisor, _) = config::processes(&process_env::ProcessEnv::from_env()?, vec![], None)?;
    let runner = workspaces
        .local_runner(|roots| codespace_runner::LocalRunner::open(roots, supervisor, false))
        .map_err(at_fault)?;
    let roots = workspaces.root_paths(&runner);
    config::ledger_path(None, &config::state_dir_path()?, roots.iter().map(|p| p.as_path()))?;
    Ok(())
}

fn serve(args: ServeArgs, worker_env: &[(String, OsString)]) -> Result<(), Failure> {
    // Every flag is checked before anything is created on disk: a refused start leaves no
    // state directory, ledger or token file behind.
    check_flags(&args)?;
    let given_token = if args.http {
        config::given_token(args.token.as_deref(), args.token_file.as_deref(), args.no_auth)?
    } else {
        None
    };
    // The person's own token for /inbox, never the MCP one.
    let person = if args.http {
        let mcp = given_token.as_ref().and_then(|(t, _)| t.as_deref());
        Some(person::PersonToken::settle(&args, &config::state_dir_path()?, mcp)?)
    } else {
        None
    };
    let process_vars = process_env::ProcessEnv::from_env()?;
    let (registry, _source) = config::load_registry(&args.registry)?;
    // Roots are opened and checked before the state directory or the ledger exists.
    let at_fault = |e: codespace_gateway::StartError| {
        UsageError(format!("{}: {e}", config_name(&args.registry)))
    };
    let workspaces = Workspaces::open(&registry).map_err(at_fault)?;
    let state_dir = config::state_dir_path()?;
    // The masked paths are set below, once the ledger's path is known.
    let (supervisor, mut exec) =
        config::processes(&process_vars, vec![], Some(state_dir.join("spill")))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Runtime(format!("tokio runtime: {e}")))?;
    // The port is ours first: the probes answer `starting` while the rest starts.
    let early = if args.http { Some(runtime.block_on(listen::bind(&args))?) } else { None };
    // Dropped before `keep_state`, a started worker takes what was made for it along.
    let (runner, mut worker) =
        runtime.block_on(runner::start(&args, &workspaces, supervisor, &state_dir, worker_env))?;
    let roots = workspaces.root_paths(&runner);
    let ledger = config::ledger_path(
        args.operations_db.as_deref(),
        &state_dir,
        roots.iter().map(|p| p.as_path()),
    )?;
    config::create_state_dir(&state_dir)?;
    if let Some(worker) = &mut worker {
        worker.keep_state();
    }
    exec.masked = masked_paths(&args, &state_dir, &ledger);
    let mut store = match &ledger {
        config::LedgerPath::Memory => Store::open_in_memory(),
        config::LedgerPath::File(path) => Store::open(path),
    }
    .map_err(|e| UsageError(format!("--operations-db: {e}")))?;
    store.set_retention(codespace_store::Retention {
        max_age_secs: args.undo_max_age_secs,
        max_bytes: args.undo_max_bytes,
    });
    let metrics = metrics::Metrics::new();
    let commits = Arc::clone(&metrics);
    store.observe_commits(Box::new(move |took| commits.ledger_commit(took)));
    // Seals holds (what a person was shown is what runs); made once, kept across restarts.
    let key = server_key::load_or_create(&state_dir)?;
    // This server owns the work it records from here on: its lock beside the ledger says
    // so to every other process, and no other server's recovery touches that work while
    // it lives.
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let instance = store
        .start_instance(std::process::id(), started)
        .map_err(|e| UsageError(format!("--operations-db: {e}")))?;
    tracing::debug!(instance = %instance, "serving as a running instance of the ledger");
    let gateway = Gateway::with_workspaces(
        workspaces,
        GatewayConfig {
            key,
            // Without every layer of the sandbox, a `sandbox: "on"` workspace refuses
            // commands instead of running them weaker.
            host: doctor::at_start(&registry),
            server_version: env!("CARGO_PKG_VERSION").to_owned(),
            store: Arc::new(store),
            runner: Arc::new(runner),
            exec,
        },
    );
    let run_dir = worker.as_ref().map(|w| w.dir().to_path_buf());
    if let Some(worker) = worker {
        runtime.spawn(worker.watch(Arc::clone(gateway.runner())));
    }
    // Operations a crash left unfinished are classified from the disk before serving.
    let recovered =
        gateway.recover().map_err(|e| Failure::Runtime(format!("ledger recovery: {e}")))?;
    for (operation_id, status) in &recovered {
        // Also sent to every client that connects: a retry may be about this operation.
        tracing::warn!(
            operation_id = %operation_id,
            status = ?status,
            "an operation interrupted by an earlier stop was classified from the disk; check it with operation_status"
        );
    }
    let gateway = Arc::new(gateway);
    // SIGHUP reloads the registry; no root may come to hold the ledger, as at start.
    let keep_out = match &ledger {
        config::LedgerPath::File(path) => vec![path.clone()],
        config::LedgerPath::Memory => vec![],
    };
    runtime.spawn(hangup::watch(args.registry.clone(), Arc::clone(&gateway), keep_out));
    if let (Some(person), Some(early)) = (person, early) {
        let (token, source) = match given_token {
            Some(given) => given,
            None => config::generate_token(&state_dir),
        };
        let wait = Duration::from_secs(args.elicitation_timeout_secs);
        let handler = mcp::CodeSpace::new(gateway, wait).with_metrics(metrics);
        let served = runtime.block_on(listen::serve(handler, args, (token, source), person, early));
        runner::remove_run_dir(run_dir.as_deref());
        served
    } else {
        if std::io::stdin().is_terminal() {
            // A person ran it by hand: say what it is waiting for instead of sitting silent.
            eprintln!(
                "codespace: speaking MCP on stdio and waiting for a client. An MCP client starts this command itself (README, \"Clients\"); for a URL instead, run `codespace serve --http` (http://127.0.0.1:8787/mcp). Ctrl-D or Ctrl-C stops."
            );
        }
        let wait = Duration::from_secs(args.elicitation_timeout_secs);
        let served = runtime.block_on(serve_stdio(gateway, wait));
        runner::remove_run_dir(run_dir.as_deref());
        served
    }
}

/// What a sandboxed command must never see, even beneath a root it may read: the state
/// directory, the ledger and its side files (the undo log and the instance locks too), the
/// token file and the
/// registry.
#[expect(
    clippy::disallowed_methods,
    reason = "the masked paths are named by their real location, as the sandbox sees them"
)]
fn masked_paths(
    args: &ServeArgs,
    state_dir: &std::path::Path,
    ledger: &config::LedgerPath,
) -> Vec<std::path::PathBuf> {
    let mut masked = vec![state_dir.to_path_buf()];
    if let config::LedgerPath::File(path) = ledger {
        for suffix in ["", "-wal", "-shm", "-journal", ".undo", ".owners"] {
            let mut p = path.clone().into_os_string();
            p.push(suffix);
            masked.push(p.into());
        }
    }
    masked.extend(args.token_file.as_deref().map(std::path::PathBuf::from));
    masked.extend(args.person_token_file.clone());
    masked.extend(args.registry.config.clone());
    masked.into_iter().map(|p| std::fs::canonicalize(&p).unwrap_or(p)).collect()
}

/// The checks that need no file, directory or registry: done first.
fn check_flags(args: &ServeArgs) -> Result<(), UsageError> {
    if args.http && args.no_auth && !is_loopback(&args.host) {
        return Err(UsageError(format!(
            "--no-auth is accepted only on a loopback bind, not --host {}",
            args.host
        )));
    }
    for o in &args.allowed_origins {
        if o.contains('*') || o == "null" {
            return Err(UsageError(format!(
                "--allowed-origin {o}: origins are matched exactly; wildcards and \"null\" are refused"
            )));
        }
    }
    Ok(())
}

fn config_name(args: &cli::RegistryArgs) -> String {
    args.config.as_ref().map_or("zero-config".to_owned(), |p| format!("--config {}", p.display()))
}

pub(crate) fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .trim_matches(['[', ']'])
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Why the server ends when stdin closes before any client opened a session.
const NO_CLIENT: &str = "stdin closed before an MCP client sent `initialize`: `codespace serve` is \
an MCP server for AI agents; an MCP client starts it and speaks JSON-RPC on its stdin/stdout \
(see the README's Clients section), or use `codespace serve --http`";

async fn serve_stdio(gateway: Arc<Gateway>, elicit_wait: Duration) -> Result<(), Failure> {
    let handler = mcp::CodeSpace::new(gateway.clone(), elicit_wait);
    let (transport, writer, modes) = stdio::transport();
    let opened = transport.opened();
    logging::serving();
    let service = handler.serve(transport).await.map_err(|e| {
        if opened.get() {
            Failure::Runtime(format!("stdio initialize failed: {e}"))
        } else {
            Failure::Runtime(NO_CLIENT.to_owned())
        }
    })?;
    let ct = service.cancellation_token();
    let result = tokio::select! {
        r = service.waiting() => r.map(drop).map_err(|e| Failure::Runtime(format!("stdio transport: {e}"))),
        () = drain::shutdown_signal() => {
            ct.cancel();
            Ok(())
        }
    };
    // Every reply already queued reaches stdout before the process ends; then, with the
    // transport gone, stdin and stdout get back the flags the server found.
    if let Ok(Ok(true)) = tokio::time::timeout(std::time::Duration::from_secs(5), writer).await {
        modes.restore();
    }
    // stdio EOF, SIGTERM or SIGINT: every command's whole tree dies with the server.
    gateway.shutdown().await;
    result
}
