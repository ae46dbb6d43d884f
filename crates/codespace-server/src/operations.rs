//! `codespace operations list|show|restore|revert`: the operator's view of the ledger
//! `serve` uses (same `--operations-db` and state directory), putting content the undo log
//! preserved back in place, and reverting an applied operation. Reports go to stdout;
//! nothing here serves MCP.

use std::io::Write;
use std::sync::Arc;

use codespace_gateway::{Gateway, GatewayConfig, HostFacts, PutBack, RestoreOutcome, Workspaces};
use codespace_protocol::Preserved;
use codespace_store::Store;

use crate::Failure;
use crate::cli::{LedgerArgs, OperationsCommand, RegistryArgs, RestoreArgs, RevertArgs};
use crate::config::{self, LedgerPath, UsageError};

pub(crate) fn run(command: OperationsCommand) -> Result<(), Failure> {
    match command {
        OperationsCommand::List(args) => {
            let store = open(&args.ledger, &[])?;
            let ops = codespace_gateway::list_operations(&store, args.limit).map_err(runtime)?;
            let instances = store.instances().map_err(runtime)?;
            let mut out = String::new();
            for op in ops {
                let owner = owner_note(&store, &instances, &op)?;
                let status = serde_json::to_value(op.status).map_err(|e| runtime(e.to_string()))?;
                out.push_str(&format!(
                    "{}\t{}\t{}\t{}\t{}{}{}{owner}\n",
                    op.operation_id,
                    status.as_str().unwrap_or("?"),
                    op.workspace_id,
                    op.created_at,
                    op.operation_key.as_deref().unwrap_or("-"),
                    preserved_note(op.preserved.len()),
                    undo_note(&op),
                ));
            }
            print(&out)
        }
        OperationsCommand::Show(args) => {
            let store = open(&args.ledger, &[])?;
            let op = codespace_gateway::show_operation(&store, &args.operation_id)
                .map_err(|e| Failure::Usage(UsageError(e.to_string())))?;
            let text = serde_json::to_string_pretty(&op).map_err(|e| runtime(e.to_string()))?;
            print(&format!("{text}\n"))
        }
        OperationsCommand::Restore(args) => restore(args),
        OperationsCommand::Revert(args) => revert(args),
    }
}

/// Who an unfinished operation belongs to: the running server (instance and pid), or a
/// server that is gone, whose work the next server to meet it settles.
fn owner_note(
    store: &Store,
    instances: &[codespace_store::InstanceRow],
    op: &codespace_protocol::OperationStatusResult,
) -> Result<String, Failure> {
    if op.finished_at.is_some() {
        return Ok(String::new());
    }
    let owner = store.get(&op.operation_id).map_err(runtime)?.and_then(|r| r.owner);
    let row = owner.as_deref().and_then(|o| instances.iter().find(|i| i.instance_id == o));
    Ok(match (owner.as_deref(), row) {
        (Some(owner), Some(row)) if row.alive => {
            format!("\trunning on {owner} (pid {})", row.pid)
        }
        (owner, _) => format!(
            "\tits server is gone ({}): the next server to meet it settles it",
            owner.unwrap_or("no owner")
        ),
    })
}

/// What the operation's undo record keeps: bytes and age, or when it was pruned.
fn undo_note(op: &codespace_protocol::OperationStatusResult) -> String {
    let Some(undo) = &op.undo else { return String::new() };
    if let Some(at) = undo.pruned_at {
        return format!("\tundo: pruned at {at}");
    }
    let finished = op.finished_at.unwrap_or(op.created_at);
    let age = (now() - finished).max(0);
    format!("\tundo: {} bytes, {age} s old", undo.kept_bytes)
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// `operations revert`: the tool's revert, run by the operator.
fn revert(args: RevertArgs) -> Result<(), Failure> {
    let gateway = operator_gateway(&args.registry, &args.ledger)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| runtime(format!("tokio runtime: {e}")))?;
    let outcome = rt.block_on(gateway.operator_revert(&args.operation_id, args.check_only));
    rt.block_on(gateway.shutdown());
    match outcome {
        Ok(result) => {
            let text = serde_json::to_string_pretty(&result).map_err(|e| runtime(e.to_string()))?;
            print(&format!("{text}\n"))
        }
        Err(e) => {
            let body = e.to_body();
            Err(Failure::Refused(format!(
                "{}: {}: {}",
                args.operation_id,
                body.code.as_str(),
                body.message
            )))
        }
    }
}

fn preserved_note(n: usize) -> String {
    if n == 0 { String::new() } else { format!("\tpreserved: {n} file(s)") }
}

fn restore(args: RestoreArgs) -> Result<(), Failure> {
    let gateway = operator_gateway(&args.registry, &args.ledger)?;
    let outcome = gateway
        .restore_operation(&args.operation_id)
        .map_err(|e| Failure::Usage(UsageError(e.to_string())))?;
    let done = match outcome {
        RestoreOutcome::Unfinished => {
            return Err(Failure::Refused(format!(
                "{} has not finished: a running server owns it, or the next `codespace serve` \
                 recovers it; restore after that",
                args.operation_id
            )));
        }
        RestoreOutcome::Done(done) => done,
    };
    if done.is_empty() {
        return print(&format!(
            "{}: nothing was preserved; nothing to restore\n",
            args.operation_id
        ));
    }
    let (out, refused) = report(&done);
    print(&out)?;
    if refused.is_empty() {
        Ok(())
    } else {
        Err(Failure::Refused(format!(
            "{}: not restored: {} (nothing was overwritten)",
            args.operation_id,
            refused.join(", ")
        )))
    }
}

/// A gateway over the registry and the ledger a server uses, with a runner in this process
/// that starts no watcher and runs no command.
#[expect(
    clippy::disallowed_methods,
    reason = "the registry's roots are compared by their real location"
)]
fn operator_gateway(registry: &RegistryArgs, ledger: &LedgerArgs) -> Result<Gateway, Failure> {
    let (registry, _source) = config::load_registry(registry)?;
    let roots: Vec<std::path::PathBuf> = registry
        .workspaces()
        .map(|w| std::fs::canonicalize(&w.root).unwrap_or_else(|_| w.root.clone()))
        .collect();
    let store = open(ledger, &roots)?;
    // A revert run here records an operation: this process owns it while it runs, so no
    // server's recovery takes it for a dead one's.
    store.start_instance(std::process::id(), now()).map_err(runtime)?;
    let process_vars = crate::process_env::ProcessEnv::from_env()?;
    // This process runs no command; the supervisor is only part of the runner.
    let (supervisor, exec) = config::processes(&process_vars, vec![], None)?;
    let start = |e: codespace_gateway::StartError| Failure::Usage(UsageError(e.to_string()));
    let workspaces = Workspaces::open(&registry).map_err(start)?;
    let runner = workspaces
        .local_runner(|roots| codespace_runner::LocalRunner::open(roots, supervisor, false))
        .map_err(start)?;
    Ok(Gateway::with_workspaces(
        workspaces,
        GatewayConfig {
            // The operator's commands make no hold, so no seal needs to outlive this process.
            key: crate::server_key::ephemeral(),
            host: HostFacts::default(),
            server_version: env!("CARGO_PKG_VERSION").to_owned(),
            store: Arc::new(store),
            runner: Arc::new(runner),
            exec,
        },
    ))
}

/// One line per preserved path, and the paths that were refused.
fn report(done: &[(Preserved, PutBack)]) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut refused = Vec::new();
    for (p, what) in done {
        let line = match what {
            PutBack::Restored => format!("restored\t{}\tfrom {}", p.path, p.undo_path),
            PutBack::AlreadyThere => {
                format!("in place\t{}\t(already holds its old content)", p.path)
            }
            PutBack::Occupied(v) => {
                refused.push(p.path.clone());
                format!(
                    "refused\t{}\toccupied by other content ({v}); move it away and run restore again; the old content stays in {}",
                    p.path, p.undo_path
                )
            }
            PutBack::Blocked(why) => {
                refused.push(p.path.clone());
                format!("refused\t{}\t{why}; the old content stays in {}", p.path, p.undo_path)
            }
        };
        out.push_str(&line);
        out.push('\n');
    }
    (out, refused)
}

/// The ledger `serve` would use; it must exist already (these commands never create one).
#[expect(
    clippy::disallowed_methods,
    reason = "an operator command opens an existing ledger, never creates one"
)]
pub(crate) fn open(args: &LedgerArgs, roots: &[std::path::PathBuf]) -> Result<Store, Failure> {
    let state_dir = config::state_dir_path()?;
    let ledger = config::ledger_path(
        args.operations_db.as_deref(),
        &state_dir,
        roots.iter().map(|p| p.as_path()),
    )?;
    let path = match ledger {
        LedgerPath::Memory => {
            return Err(Failure::Usage(UsageError(
                "--operations-db :memory: belongs to the process that opened it; give the ledger file `serve` uses".to_owned(),
            )));
        }
        LedgerPath::File(path) => path,
    };
    if !path.exists() {
        return Err(Failure::Usage(UsageError(format!(
            "no operation ledger at {} (give --operations-db as `serve` had it)",
            path.display()
        ))));
    }
    Store::open(&path).map_err(|e| Failure::Usage(UsageError(format!("--operations-db: {e}"))))
}

/// Writes an operator command's report to stdout with every hidden character in it (an
/// escape sequence, a bidirectional mark in a path, an operation key or a summary) written
/// out as a JSON escape (`\u001b`, `\u202e`), so nothing from the ledger can drive the
/// terminal or reorder what the operator reads; line feeds and tabs stay.
pub(crate) fn print(text: &str) -> Result<(), Failure> {
    let shown = codespace_types::visible::escape_json(text);
    std::io::stdout().write_all(shown.as_bytes()).map_err(|e| runtime(format!("stdout: {e}")))
}

pub(crate) fn runtime(e: impl std::fmt::Display) -> Failure {
    Failure::Runtime(e.to_string())
}
