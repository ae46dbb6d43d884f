//! Where the runner runs: in this process, in a worker this server starts (`--runner uds`:
//! this binary's `worker` role on a socket in a fresh private directory), or in a worker
//! started separately (`--runner-socket`). Also the worker role itself.

use std::ffi::OsString;
use std::os::fd::AsFd;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use codespace_gateway::Workspaces;
use codespace_process::Supervisor;
use codespace_runner::{ConnectError, Runner, SocketRunner};
use rand::Rng;

use crate::Failure;
use crate::cli::{RunnerMode, ServeArgs};
use crate::config::UsageError;

/// The variables a started worker keeps: what its supervisor and logs read. Everything
/// else (the token above all) stays behind.
const WORKER_ENV: [&str; 9] = [
    "PATH",
    "HOME",
    "LANG",
    "RUST_LOG",
    "NO_COLOR",
    "CODESPACE_PROCESS_TIMEOUT_SECS",
    "CODESPACE_MAX_PROCESSES",
    "CODESPACE_PROCESS_MAX_PIDS",
    "CODESPACE_PROCESS_SPILL_BYTES",
];

/// How long a started worker may take to listen.
const LISTEN_WAIT: Duration = Duration::from_secs(5);

/// A worker this server started: it must not outlive the server, nor the server it.
pub(crate) struct OwnedWorker {
    child: tokio::process::Child,
    dir: PathBuf,
    /// The first directory made for the worker that did not exist before (the state
    /// directory on a first start): removed with it if the start is refused, so a refused
    /// start leaves nothing behind.
    created: Option<PathBuf>,
}

/// A refused start (the worker dropped before [`OwnedWorker::keep_state`]) removes what it
/// made; any other end removes only the worker's own directory.
impl Drop for OwnedWorker {
    #[expect(
        clippy::disallowed_methods,
        reason = "the worker's private directory, outside every workspace"
    )]
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        let _ = std::fs::remove_dir_all(self.created.as_ref().unwrap_or(&self.dir));
    }
}

/// Whether `args` put the runner in a worker.
pub(crate) fn in_worker(args: &ServeArgs) -> bool {
    args.runner == RunnerMode::Uds || args.runner_socket.is_some()
}

/// The runner `args` ask for, over `workspaces`. `supervisor` is used only in process;
/// `worker_env` is added to a started worker's variables (a test binary's faults).
pub(crate) async fn start(
    args: &ServeArgs,
    workspaces: &Workspaces,
    supervisor: Arc<Supervisor>,
    state_dir: &Path,
    worker_env: &[(String, OsString)],
) -> Result<(Runner, Option<OwnedWorker>), Failure> {
    let name = crate::config_name(&args.registry);
    let at_fault = |e: codespace_gateway::StartError| UsageError(format!("{name}: {e}"));
    if !in_worker(args) {
        let runner = workspaces
            .local_runner(|roots| {
                codespace_runner::LocalRunner::open(roots, supervisor, !args.no_watch)
            })
            .map_err(at_fault)?;
        return Ok((runner, None));
    }
    let (socket, owned) = match &args.runner_socket {
        Some(path) => (path.clone(), None),
        None => {
            let owned = spawn_worker(
                args.runner_dir.as_deref().unwrap_or(state_dir),
                state_dir,
                worker_env,
            )?;
            (owned.dir.join("runner.sock"), Some(owned))
        }
    };
    let stream = connect(&socket, owned.is_some()).await?;
    let version = env!("CARGO_PKG_VERSION");
    let runner = SocketRunner::connect(stream, version, &workspaces.host_roots(), !args.no_watch)
        .await
        .map_err(|e| match e {
            // A root the worker cannot open is the registry's fault, as in process.
            ConnectError::Open(e) => Failure::Usage(at_fault(codespace_gateway::StartError {
                key: format!("workspaces.{}.root", e.id),
                reason: e.reason,
            })),
            other => Failure::Usage(UsageError(format!("--runner: {other}"))),
        })?;
    let runner = Runner::Socket(runner);
    workspaces.check_roots(&runner).map_err(at_fault)?;
    tracing::info!(socket = %socket.display(), owned = owned.is_some(), "runner worker connected");
    Ok((runner, owned))
}

/// Starts this binary's worker role on a socket in a fresh 0700 directory under `base`:
/// stdin from /dev/null, stdout to our stderr (stdout is MCP's), only the variables
/// [`WORKER_ENV`] names (and `worker_env`), and no descriptor beyond 0-2 (ours are
/// close-on-exec).
#[expect(
    clippy::disallowed_methods,
    reason = "the worker's private directory, its process and the variables it keeps"
)]
fn spawn_worker(
    base: &Path,
    state_dir: &Path,
    worker_env: &[(String, OsString)],
) -> Result<OwnedWorker, Failure> {
    let runtime =
        |what: &str, e: std::io::Error| Failure::Runtime(format!("runner worker: {what}: {e}"));
    let created = base.ancestors().take_while(|a| !a.exists()).last().map(Path::to_path_buf);
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(base)
        .map_err(|e| runtime("its directory", e))?;
    let mut nonce = [0u8; 8];
    rand::rng().fill_bytes(&mut nonce);
    let dir = base.join(format!("run-{}-{}", std::process::id(), hex::encode(nonce)));
    std::fs::DirBuilder::new().mode(0o700).create(&dir).map_err(|e| runtime("its directory", e))?;
    let exe = std::env::current_exe().map_err(|e| runtime("locating this binary", e))?;
    let stderr =
        std::io::stderr().as_fd().try_clone_to_owned().map_err(|e| runtime("stderr", e))?;
    let mut command = tokio::process::Command::new(exe);
    command
        .arg("worker")
        .arg("--socket")
        .arg(dir.join("runner.sock"))
        .arg("--spill-dir")
        .arg(state_dir.join("spill"))
        .arg("--owned-by")
        .arg(std::process::id().to_string())
        .env_clear()
        .envs(WORKER_ENV.iter().filter_map(|k| std::env::var_os(k).map(|v| (k, v))))
        .envs(worker_env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::from(stderr))
        .kill_on_drop(true);
    let worker = OwnedWorker {
        child: command.spawn().map_err(|e| runtime("starting it", e))?,
        dir,
        created,
    };
    Ok(worker)
}

/// Connects to the worker's socket; a worker this server started gets a few seconds to
/// listen.
async fn connect(socket: &Path, wait: bool) -> Result<tokio::net::UnixStream, Failure> {
    let deadline = tokio::time::Instant::now() + if wait { LISTEN_WAIT } else { Duration::ZERO };
    loop {
        match tokio::net::UnixStream::connect(socket).await {
            Ok(stream) => return Ok(stream),
            Err(e) if tokio::time::Instant::now() >= deadline => {
                return Err(Failure::Usage(UsageError(format!(
                    "--runner: cannot connect to the runner worker at {}: {e}",
                    socket.display()
                ))));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

/// Removes a started worker's private directory once the server is done with it.
#[expect(
    clippy::disallowed_methods,
    reason = "the worker's private directory, outside every workspace"
)]
pub(crate) fn remove_run_dir(dir: Option<&Path>) {
    if let Some(dir) = dir {
        let _ = std::fs::remove_dir_all(dir);
    }
}

impl OwnedWorker {
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The start went through: the directories made for the worker stay (the state
    /// directory holds the ledger now).
    pub(crate) fn keep_state(&mut self) {
        self.created = None;
    }

    /// Waits until the worker or its connection is gone, then ends this server with a
    /// failure: a supervisor (systemd, say) restarts it. There is no reconnect.
    #[expect(
        clippy::disallowed_methods,
        reason = "a lost worker ends the server with a failure status, its directory removed"
    )]
    pub(crate) async fn watch(mut self, runner: Arc<Runner>) {
        let lost = async {
            match &*runner {
                Runner::Socket(r) => r.lost().await,
                Runner::Local(_) => std::future::pending().await,
            }
        };
        let why = tokio::select! {
            status = self.child.wait() => format!("the runner worker exited ({})", status.map_or_else(|e| e.to_string(), |s| s.to_string())),
            () = lost => "the connection to the runner worker is lost".to_owned(),
        };
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
        let _ = std::fs::remove_dir_all(&self.dir);
        tracing::error!(
            "{why}: no file or process tool can run; exiting so that a supervisor restarts the server"
        );
        std::process::exit(1);
    }
}

mod worker;

pub(crate) use worker::{parse_group, parse_socket_mode, worker};
