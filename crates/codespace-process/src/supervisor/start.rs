//! Starting a process: request validation, slot reservation, the shim's start handshake,
//! and turning a started shim into a handle with its tasks.

use std::os::fd::{AsFd as _, OwnedFd};
use std::sync::Arc;
use std::time::Duration;

use rustix::fs::{Mode, OFlags};
use tokio::io::BufReader;
use tokio::net::unix::pipe;

use super::Supervisor;
use super::config::{TTY_COLS, TTY_ROWS};
use super::handle::{Finalizer, Proc};
use super::tasks::{next_report, start_io, stop_shim, supervise};
use crate::error::ProcError;
use crate::shim::ShimGuard;
use crate::shim_messages::ShimReport;
use crate::spawn::{self, CommandIo, RunningShim, ShimSpec};
use crate::types::{ExitWatch, SpawnRequest, Spawned};

/// How long the shim may take to report that the command started.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

impl Supervisor {
    /// Starts a command under its own reaper shim.
    ///
    /// A slot is reserved first: over the limit the call fails with
    /// [`ProcError::LimitReached`] and no child is created. The shim looks `argv[0]` up on
    /// the request's `PATH` in the working directory before it starts the command, so a
    /// missing executable is [`ProcError::SpawnFailed`] with no handle and no command run;
    /// so is anything else the shim reports it could not do (an `execve` error such as a
    /// missing script interpreter). The supervisor itself touches no path of the working
    /// directory beyond opening `cwd` when no `cwd_dir` is given: the shim enters the
    /// directory through the descriptor it is passed.
    /// On success the command runs; `exited` resolves once it and its tree are gone.
    pub async fn spawn(&self, req: SpawnRequest) -> Result<Spawned, ProcError> {
        self.spawn_as(None, req).await
    }

    /// [`Supervisor::spawn`] under an id the caller chose (`proc-` and a fresh UUID
    /// otherwise): a caller that may lose the answer still knows which process to ask
    /// about. An id already in the table is refused.
    pub async fn spawn_as(
        &self,
        id: Option<String>,
        req: SpawnRequest,
    ) -> Result<Spawned, ProcError> {
        if let Some(id) = &id
            && self.status(id).is_ok()
        {
            return Err(ProcError::Invalid(format!("process id {id} is taken")));
        }
        validate(&req)?;
        let reservation = self.reserve()?;
        let cwd = working_directory(&req)?;
        let spec = ShimSpec {
            reaper_exe: &self.config.reaper_exe,
            reaper_arg: &self.config.reaper_arg,
            helper: self.config.spawn_helper,
            search_path: spawn::search_path(&req.env),
            argv: &req.argv,
            env: &req.env,
            cwd,
            tty: req.tty,
            sandbox: req.sandbox.clone(),
            external: req.external.clone(),
            rows: TTY_ROWS,
            cols: TTY_COLS,
        };
        let RunningShim { mut shim, reports, mut io } = spawn::start_shim(&self.spawner, spec)
            .await
            .map_err(|e| ProcError::SpawnFailed(format!("starting the reaper: {e}")))?;
        let mut reports = BufReader::new(reports);
        handshake(&mut shim, &mut reports).await?;

        let control = match &mut io {
            CommandIo::Pty { control, .. } => control.take(),
            CommandIo::Pipes { .. } => None,
        };
        let (proc, stdin, exit_rx) =
            Proc::start(req.tty, req.timeout, req.kill_grace, self.new_output(), control);
        let id = id.unwrap_or_else(|| format!("proc-{}", uuid::Uuid::new_v4()));
        if !self.commit(reservation, &id, &proc) {
            stop_shim(&mut shim).await;
            return Err(ProcError::SpawnFailed("the supervisor is shutting down".into()));
        }
        let pump = start_io(io, stdin, &proc);
        let finalizer = Finalizer { proc: Arc::clone(&proc), clock: self.config.clock.clone() };
        tokio::spawn(supervise(finalizer, shim, reports, pump, req.timeout));
        Ok(Spawned { id, exited: ExitWatch(exit_rx) })
    }
}

/// Waits for the shim's first report: `started`, or why the command did not start (the
/// shim is then stopped, so nothing is left behind).
async fn handshake(
    shim: &mut ShimGuard,
    reports: &mut BufReader<pipe::Receiver>,
) -> Result<(), ProcError> {
    let why = match tokio::time::timeout(HANDSHAKE_TIMEOUT, next_report(reports)).await {
        Ok(Some(ShimReport::Started { .. })) => return Ok(()),
        Ok(Some(ShimReport::Failed { message, .. })) => message,
        Ok(Some(ShimReport::Exited { .. } | ShimReport::Signaled { .. }) | None) => {
            "the reaper exited before starting the command".to_owned()
        }
        Err(_elapsed) => "the reaper did not report within 10 s".to_owned(),
    };
    stop_shim(shim).await;
    Err(ProcError::SpawnFailed(why))
}

/// The descriptor the shim enters: a duplicate of `cwd_dir`, or `cwd` opened now.
#[expect(
    clippy::disallowed_methods,
    reason = "opens the working directory of a request that has no descriptor for it"
)]
fn working_directory(req: &SpawnRequest) -> Result<OwnedFd, ProcError> {
    let failed = |e: rustix::io::Errno| ProcError::SpawnFailed(format!("working directory: {e}"));
    if let Some(dir) = &req.cwd_dir {
        return rustix::io::fcntl_dupfd_cloexec(dir.as_fd(), 0).map_err(failed);
    }
    let cwd = std::path::absolute(&req.cwd)
        .map_err(|e| ProcError::SpawnFailed(format!("working directory: {e}")))?;
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    rustix::fs::open(&cwd, flags, Mode::empty())
        .map_err(|e| ProcError::SpawnFailed(format!("working directory {}: {e}", cwd.display())))
}

fn validate(req: &SpawnRequest) -> Result<(), ProcError> {
    let invalid = |m: &str| Err(ProcError::Invalid(m.to_owned()));
    match req.argv.first() {
        None => return invalid("argv is empty"),
        Some(a) if a.is_empty() => return invalid("argv[0] is empty"),
        Some(_) => {}
    }
    if req.argv.iter().any(|a| a.contains('\0')) {
        return invalid("argv contains a NUL byte");
    }
    for (k, v) in &req.env {
        if k.is_empty() || k.contains('=') || k.contains('\0') || v.contains('\0') {
            return Err(ProcError::Invalid(format!("invalid environment variable {k:?}")));
        }
    }
    if req.timeout.is_zero() {
        return invalid("timeout must be positive");
    }
    Ok(())
}
