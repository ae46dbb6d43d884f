//! The worker role (`codespace worker --socket PATH`): listens on its socket (mode and group
//! the operator's, 0600 and the worker's own group by default; the path must not exist),
//! tries every connection's handshake on its own task, serves the first gateway that
//! passes it and ends (its commands killed) when that gateway goes. A peer that connects
//! and leaves, sends junk or announces a huge frame is dropped with a log line; the worker
//! keeps listening.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use codespace_runner::WorkerFaults;
use tokio::task::JoinSet;

use crate::Failure;
use crate::cli::WorkerArgs;
use crate::config::UsageError;

/// Connections whose handshake may be in progress at once; more wait in the listen queue.
const PENDING_HANDSHAKES: usize = 16;

/// The listening socket's permissions, as the operator set them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SocketAccess {
    /// Permission bits (`0600` by default); never writable by others, which would let any
    /// local user drive the worker.
    pub(crate) mode: u32,
    /// The group that owns the socket, for a mode that lets the group connect.
    pub(crate) group: Option<u32>,
}

/// Parses `--socket-mode`: octal permission bits, owner read and write included, nothing
/// for others.
pub(crate) fn parse_socket_mode(text: &str) -> Result<u32, String> {
    let digits = text.strip_prefix("0o").unwrap_or(text);
    let mode = u32::from_str_radix(digits, 8)
        .map_err(|_| format!("{text:?} is not an octal mode such as 0660"))?;
    if mode & !0o777 != 0 {
        return Err(format!("{text:?}: only permission bits (at most 0777) may be set"));
    }
    if mode & 0o600 != 0o600 {
        return Err(format!("{text:?}: the worker's own user must keep read and write (0600)"));
    }
    if mode & 0o007 != 0 {
        return Err(format!(
            "{text:?}: other users may not connect (any of them could drive the worker); \
             give the server's user a group and use a mode such as 0660"
        ));
    }
    Ok(mode)
}

/// Parses `--socket-group`: a group id, or a name looked up in `/etc/group`.
#[expect(clippy::disallowed_methods, reason = "the host's group database, outside every workspace")]
pub(crate) fn parse_group(text: &str) -> Result<u32, String> {
    if let Ok(gid) = text.parse::<u32>() {
        return Ok(gid);
    }
    let groups = std::fs::read_to_string("/etc/group")
        .map_err(|e| format!("{text:?} is not a number, and /etc/group cannot be read: {e}"))?;
    groups
        .lines()
        .filter_map(|line| {
            let mut fields = line.split(':');
            let name = fields.next()?;
            let gid = fields.nth(1)?.parse::<u32>().ok()?;
            (name == text).then_some(gid)
        })
        .next()
        .ok_or_else(|| format!("no group {text:?} in /etc/group (a group id works too)"))
}

/// The worker role. `faults` are armed only by a test binary.
#[expect(clippy::disallowed_methods, reason = "the worker's socket, outside every workspace")]
pub(crate) fn worker(args: WorkerArgs, faults: WorkerFaults) -> Result<(), Failure> {
    if let Some(parent) = args.owned_by {
        // A started worker dies with its server, even a killed one: its commands' reapers
        // then kill their trees, and no write of it outlives the server's recovery.
        rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
            .map_err(|e| Failure::Runtime(format!("runner worker: parent-death signal: {e}")))?;
        if rustix::process::getppid().map(|p| p.as_raw_nonzero().get()) != Some(parent as i32) {
            return Err(Failure::Runtime("runner worker: its server is already gone".to_owned()));
        }
    }
    let access = SocketAccess { mode: args.socket_mode, group: args.socket_group };
    // Before anything that may start a thread: the bind changes the process's umask.
    let (listener, staged) = listen(&args.socket, access)?;
    let supervisor = crate::process_env::ProcessEnv::from_env()
        .and_then(|vars| crate::config::processes(&vars, vec![], args.spill_dir.clone()))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&staged);
        })?
        .0;
    // One thread: a call's hops between the socket's tasks and its handler stay on it
    // (measured: +189 µs per read over the socket instead of +260 with a thread pool);
    // blocking jobs and walks still run on the blocking pool.
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| {
            let _ = std::fs::remove_file(&staged);
            Failure::Runtime(format!("tokio runtime: {e}"))
        })?;
    runtime.block_on(async move {
        let listener = tokio::net::UnixListener::from_std(listener).map_err(|e| {
            let _ = std::fs::remove_file(&staged);
            Failure::Runtime(format!("--socket: {e}"))
        })?;
        // Only now, with everything the worker needs made, does the socket take its name:
        // a peer that connects as soon as the path exists is answered.
        publish(&staged, &args.socket)?;
        let build = env!("CARGO_PKG_VERSION").to_owned();
        let welcomed = first_gateway(&listener, &build).await;
        // One gateway per worker: nobody else may connect.
        drop(listener);
        let _ = std::fs::remove_file(&args.socket);
        let served = codespace_runner::serve_gateway(welcomed, supervisor, build, faults).await;
        served.map_err(|e| Failure::Runtime(format!("runner worker: {e}")))
    })
}

/// Binds a listener under a hidden staging name beside `socket` (see [`staging_path`])
/// with no access beyond the owner's (the umask while binding) and gives it the operator's
/// group and mode; [`publish`] later puts it at its path: a peer that sees the path finds a
/// listening socket with its final access, never one between bind and listen. Returns the
/// listener and the name it is bound under.
#[expect(clippy::disallowed_methods, reason = "the worker's socket, outside every workspace")]
fn listen(
    socket: &Path,
    access: SocketAccess,
) -> Result<(std::os::unix::net::UnixListener, PathBuf), Failure> {
    let usage = |e: std::io::Error| {
        Failure::Usage(UsageError(format!("--socket {}: {e}", socket.display())))
    };
    if std::fs::symlink_metadata(socket).is_ok() {
        return Err(usage(std::io::ErrorKind::AddrInUse.into()));
    }
    let staged = staging_path(socket);
    // No other thread runs yet: the umask (the process's) is ours to change for the bind.
    let old = rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o177));
    let bound = std::os::unix::net::UnixListener::bind(&staged);
    rustix::process::umask(old);
    let listener = bound.map_err(usage)?;
    let remove = |failure: Failure| {
        let _ = std::fs::remove_file(&staged);
        failure
    };
    if let Some(gid) = access.group {
        let gid = rustix::fs::Gid::from_raw(gid);
        rustix::fs::chown(&staged, None, Some(gid)).map_err(|e| {
            remove(Failure::Usage(UsageError(format!(
                "--socket-group {}: cannot give {} to that group (the worker's user must be in \
                 it): {e}",
                gid.as_raw(),
                socket.display()
            ))))
        })?;
    }
    std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(access.mode))
        .map_err(|e| remove(Failure::Runtime(format!("--socket-mode: {e}"))))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| remove(Failure::Runtime(format!("--socket: {e}"))))?;
    Ok((listener, staged))
}

/// Renames the listening socket from its staging name to `socket`; NOREPLACE: a file that
/// appeared at the path meanwhile is not ours to replace.
#[expect(clippy::disallowed_methods, reason = "the worker's socket, outside every workspace")]
fn publish(staged: &Path, socket: &Path) -> Result<(), Failure> {
    if staged == socket {
        return Ok(());
    }
    let cwd = rustix::fs::CWD;
    rustix::fs::renameat_with(cwd, staged, cwd, socket, rustix::fs::RenameFlags::NOREPLACE).map_err(
        |e| {
            let _ = std::fs::remove_file(staged);
            Failure::Usage(UsageError(format!("--socket {}: {e}", socket.display())))
        },
    )
}

/// A short hidden name beside `socket` to bind first; `socket` itself when that name would
/// not fit in a socket address (108 bytes) where `socket` does.
fn staging_path(socket: &Path) -> PathBuf {
    let staged = socket.with_file_name(format!(".worker-{}.sock", std::process::id()));
    if staged.as_os_str().len() < 108 { staged } else { socket.to_path_buf() }
}

/// Accepts connections until one passes the handshake; every other one is dropped (and
/// logged) without ending the worker.
async fn first_gateway(
    listener: &tokio::net::UnixListener,
    build: &str,
) -> codespace_runner::WelcomedGateway {
    let mut pending = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept(), if pending.len() < PENDING_HANDSHAKES => match accepted {
                Ok((stream, _)) => {
                    let build = build.to_owned();
                    pending.spawn(async move { codespace_runner::welcome_gateway(stream, &build).await });
                }
                // Out of descriptors, say: a bad moment, not a reason to stop listening.
                Err(e) => {
                    tracing::warn!(error = %e, "runner worker: accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            Some(done) = pending.join_next() => match done {
                Ok(Ok(Some(welcomed))) => {
                    pending.abort_all();
                    tracing::info!("runner worker: a gateway connected");
                    return welcomed;
                }
                Ok(Ok(None)) => tracing::info!("runner worker: a peer connected and left before the handshake"),
                Ok(Err(e)) => tracing::warn!(error = %e, "runner worker: a connection was refused; still listening"),
                Err(e) => tracing::warn!(error = %e, "runner worker: a handshake task failed; still listening"),
            },
        }
    }
}

#[cfg(test)]
mod tests;
