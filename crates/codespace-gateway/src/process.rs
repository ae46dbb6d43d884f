//! The process tools: `exec_command` takes the workspace's mutation lease and hands it to
//! the live process (released when it exits, however it exits); the other tools act on a
//! saved `process_id` and never need the lease, so they work from any connection.

use std::collections::BTreeMap;
use std::time::Duration;

use codespace_policy::{Action, Granted, Workspace};
use codespace_protocol::{
    DispatchStatus, ExecCommandParams, ExecCommandResult, ProcessAck, ProcessResizeParams,
    ProcessStatusParams, ProcessStatusResult, ReadProcessParams, ReadProcessResult,
    TerminateProcessParams, WriteStdinParams,
};
use codespace_runner::{
    ExternalPolicy, ProcError, RunnerError, SandboxPolicy, SpawnJob, Started, Terminate, WaitFor,
};
use codespace_types::{Approvals, SandboxSetting};

use codespace_runner::ops;

use crate::holds::Held;
use crate::waits::{read_limit, wait_for};
use crate::{Gateway, GatewayError, HeldBy};

/// How commands are started: the time limit and the clean environment they get.
#[derive(Debug, Clone)]
pub struct ExecSettings {
    /// The server's default time limit (`CODESPACE_PROCESS_TIMEOUT_SECS`); a workspace's
    /// `timeout_secs` replaces it.
    pub timeout: Duration,
    /// `PATH` of the child (also where `command[0]` is resolved).
    pub path: String,
    pub home: String,
    pub lang: String,
    /// The `pid_max` of a sandboxed command's PID namespace (its process cap).
    pub max_pids: u32,
    /// Paths hidden from sandboxed commands even beneath a visible root: the server's
    /// state directory, ledger, token file and registry file.
    pub masked: Vec<std::path::PathBuf>,
}

impl ExecSettings {
    /// The command's environment: the clean base, then the workspace's `env` on top (a
    /// name it sets replaces the base's).
    fn env(
        &self,
        tty: bool,
        sandboxed: bool,
        extra: &BTreeMap<String, String>,
    ) -> Vec<(String, String)> {
        let mut env = vec![
            ("PATH".to_owned(), self.path.clone()),
            ("HOME".to_owned(), self.home.clone()),
            ("LANG".to_owned(), self.lang.clone()),
        ];
        if tty {
            env.push(("TERM".to_owned(), "xterm".to_owned()));
        }
        if sandboxed {
            // The sandbox's private /tmp.
            env.push(("TMPDIR".to_owned(), "/tmp".to_owned()));
        }
        for (name, value) in extra {
            match env.iter_mut().find(|(n, _)| n == name) {
                Some(slot) => slot.1.clone_from(value),
                None => env.push((name.clone(), value.clone())),
            }
        }
        env
    }

    /// What a command of `ws` runs under: the sandbox (a private root holding the system
    /// directories, the workspace, writable only for workspace-write, and its extra read
    /// roots, and the network policy), or for an externally isolated workspace the same
    /// roots confined without namespaces as far as `host` allows, or neither (the
    /// operator's explicit opt-out).
    fn confinement(
        &self,
        ws: &Workspace,
        root: &std::path::Path,
        host: &crate::HostFacts,
    ) -> (Option<SandboxPolicy>, Option<ExternalPolicy>) {
        let mut read_roots = ws.extra_read_roots.clone();
        let mut writable_roots = Vec::new();
        if ws.profile.can_write() {
            writable_roots.push(root.to_path_buf());
        } else {
            read_roots.push(root.to_path_buf());
        }
        match ws.sandbox {
            SandboxSetting::On => {
                let policy = SandboxPolicy {
                    read_roots,
                    writable_roots,
                    masked: self.masked.clone(),
                    network: ws.network,
                    max_pids: self.max_pids,
                    // Bound from the pinned descriptor the command starts in, not its path.
                    workdir: Some(root.to_path_buf()),
                };
                (Some(policy), None)
            }
            SandboxSetting::External => {
                let policy = ExternalPolicy {
                    read_roots,
                    writable_roots,
                    network: ws.network,
                    landlock: host.external_landlock(),
                    seccomp: host.seccomp,
                };
                (None, Some(policy))
            }
            SandboxSetting::Off => (None, None),
        }
    }
}

impl Gateway {
    pub async fn exec_command(
        &self,
        p: ExecCommandParams,
    ) -> Result<ExecCommandResult, GatewayError> {
        self.authorized(&p.workspace_id, Action::Exec)?;
        let coordination = self.work_hint(&p.workspace_id, p.work_id.as_deref())?;
        self.check_command(&p)?;
        if self.lookup(&p.workspace_id)?.ws.approvals == Approvals::Confirm {
            return Err(self.require_hold(Held::Exec(p)).await);
        }
        let started = self.exec_now(p, None).await?;
        Ok(ExecCommandResult { coordination, ..started })
    }

    /// What refuses a command before anything else: a sandbox the host cannot enter, an
    /// empty argv, a NUL byte, a reply size out of bounds.
    pub(crate) fn check_command(&self, p: &ExecCommandParams) -> Result<(), GatewayError> {
        let reg = self.lookup(&p.workspace_id)?;
        // Fail closed: without a command sandbox, only an explicit `sandbox: "off"` (or
        // `"external"`: the pod is the boundary) runs commands, never `"on"`.
        if reg.ws.sandbox == SandboxSetting::On && !self.host.command_sandbox() {
            return Err(GatewayError::SandboxUnavailable(self.host.sandbox_missing.join(", ")));
        }
        if p.command.first().is_none_or(String::is_empty) {
            return Err(GatewayError::InvalidCommand(
                "command must be a non-empty argv; command[0] names the program".to_owned(),
            ));
        }
        if p.command.iter().any(|a| a.contains('\0')) {
            return Err(GatewayError::InvalidCommand(
                "command arguments must not contain NUL".to_owned(),
            ));
        }
        // The reply's size is checked before anything starts, not after the wait.
        if p.wait_ms.is_some_and(|ms| ms > 0) {
            read_limit(p.max_bytes)?;
        }
        Ok(())
    }

    /// The time limit a command of this request runs under.
    pub(crate) fn granted_timeout(&self, p: &ExecCommandParams) -> Result<Granted, GatewayError> {
        let reg = self.lookup(&p.workspace_id)?;
        Ok(reg.ws.timeouts(self.exec.timeout.as_secs()).grant(p.timeout_secs))
    }

    /// The command path after policy, checks and holds: the lease, then the spawn. A
    /// resumed hold (`resume`: its id) moves to `resuming` once the lease is held.
    pub(crate) async fn exec_now(
        &self,
        p: ExecCommandParams,
        resume: Option<&str>,
    ) -> Result<ExecCommandResult, GatewayError> {
        let reg = self.lookup(&p.workspace_id)?;
        let tty = p.tty.unwrap_or(false);
        let settings = &self.exec;
        // None: a reload removed the workspace since the call looked it up.
        let root = (self.runner.root_path(&p.workspace_id))
            .ok_or_else(|| GatewayError::WorkspaceNotFound { id: p.workspace_id.clone() })?;
        let (sandbox, external) = settings.confinement(&reg.ws, &root, &self.host);
        let granted = self.granted_timeout(&p)?;
        let lease = self.leases.acquire(&p.workspace_id).await.map_err(GatewayError::Lease)?;
        if let Some(approval_id) = resume {
            crate::holds::start(self, approval_id, false).await?;
        }
        let argv = p.command.clone();
        let job = SpawnJob {
            argv: p.command,
            env: settings.env(tty, sandbox.is_some(), &reg.ws.env),
            tty,
            timeout: Duration::from_secs(granted.secs),
            kill_grace: Duration::from_millis(reg.ws.kill_grace_ms),
            sandbox,
            external,
        };
        // On failure the lease is dropped here, so a refused spawn never holds the workspace.
        let Started { id, exited, confirmed } =
            self.runner.spawn(&p.workspace_id, job).await.map_err(|e| no_shell(e, &argv[0]))?;
        let probe = exited.clone();
        let by = HeldBy::process(&id, &argv);
        let held = lease.into_process(by, Box::new(move || !probe.has_exited()));
        self.own_process(&id, &p.workspace_id);
        tokio::spawn(async move {
            exited.wait().await;
            drop(held);
        });
        Ok(ExecCommandResult {
            process_id: id,
            // Unconfirmed: the worker's answer was lost and the command may be running; the
            // lease stays held until it is known gone.
            dispatch_status: if confirmed {
                DispatchStatus::Confirmed
            } else {
                DispatchStatus::Unknown
            },
            timeout_secs: granted.secs,
            timeout_clamped: granted.clamped,
            work_id: p.work_id,
            coordination: None,
            state: None,
            termination: None,
            exit_code: None,
            signal: None,
            output: None,
        })
    }

    pub async fn write_stdin(&self, p: WriteStdinParams) -> Result<ProcessAck, GatewayError> {
        let close = p.close.unwrap_or(false);
        self.runner
            .run(ops::WriteStdin { id: p.process_id.clone(), data: p.data.into_bytes(), close })
            .await
            .map_err(GatewayError::from)?;
        Ok(ProcessAck {
            ok: true,
            already_exited: false,
            rows: None,
            cols: None,
            grace_ms: None,
            grace_clamped: false,
            coordination: self.process_hint(&p.process_id),
        })
    }

    /// Reads output from the cursor; with `wait_ms`, first waits (without holding any lock)
    /// for `min_bytes` past it or the process's end, until the wait or `cancelled` ends. At
    /// the output's end it adds the process's exit, so the last read needs no
    /// `process_status` after it.
    pub async fn read_process(
        &self,
        p: ReadProcessParams,
        cancelled: impl Future<Output = ()>,
    ) -> Result<ReadProcessResult, GatewayError> {
        let max = read_limit(p.max_bytes)?;
        let runner = &self.runner;
        let cursor = p.cursor.unwrap_or(0);
        // More than one reply carries is never waited for.
        let min = p.min_bytes.unwrap_or(1).min(max as u64);
        let wait = WaitFor::Output { cursor, min };
        let mut cancelled = std::pin::pin!(cancelled);
        wait_for(runner, &p.process_id, wait, p.wait_ms, cancelled.as_mut()).await?;
        let job = ops::ReadOutput { id: p.process_id.clone(), cursor, max };
        let ops::OutputRead { chunk, status } =
            runner.run(job).await.map_err(GatewayError::from)?;
        // The read at the end carries the exit (taken with it). A waiting read answers
        // once the exit is seen here too, so the lease the command held is free by then;
        // a wait that fails leaves the exit to process_status.
        let exit = match chunk.eof {
            true => {
                let waited = wait_for(runner, &p.process_id, WaitFor::Exit, p.wait_ms, cancelled);
                waited.await.ok().map(|()| *status)
            }
            false => None,
        };
        let coordination = self.process_hint(&p.process_id);
        Ok(ReadProcessResult {
            process_id: p.process_id,
            cursor: chunk.cursor,
            chunk: crate::text_of(chunk.chunk).0,
            eof: chunk.eof,
            output_lost: chunk.output_lost,
            retained_from: chunk.retained_from,
            state: exit.as_ref().map(|st| st.state),
            termination: exit.as_ref().and_then(|st| st.termination),
            exit_code: exit.as_ref().and_then(|st| st.exit_code),
            signal: exit.and_then(|st| st.signal),
            coordination,
        })
    }

    /// The process's state; with `wait_ms`, first waits (without holding any lock) for its
    /// exit, until the wait or `cancelled` ends.
    pub async fn process_status(
        &self,
        p: ProcessStatusParams,
        cancelled: impl Future<Output = ()>,
    ) -> Result<ProcessStatusResult, GatewayError> {
        let runner = &self.runner;
        wait_for(runner, &p.process_id, WaitFor::Exit, p.wait_ms, cancelled).await?;
        let st = runner
            .run(ops::Status { id: p.process_id.clone() })
            .await
            .map_err(GatewayError::from)?;
        let coordination = self.process_hint(&p.process_id);
        Ok(ProcessStatusResult {
            process_id: p.process_id,
            state: st.state,
            termination: st.termination,
            exit_code: st.exit_code,
            signal: st.signal,
            output_total: st.output_total,
            output_retained_from: st.retained_from,
            eof: st.eof,
            timeout_secs: st.timeout.as_secs(),
            started_at: st.started_at_ms,
            exited_at: st.exited_at_ms,
            coordination,
        })
    }

    pub async fn process_resize(&self, p: ProcessResizeParams) -> Result<ProcessAck, GatewayError> {
        self.runner
            .run(ops::Resize { id: p.process_id.clone(), rows: p.rows, cols: p.cols })
            .await
            .map_err(GatewayError::from)?;
        Ok(ProcessAck {
            ok: true,
            already_exited: false,
            rows: Some(p.rows),
            cols: Some(p.cols),
            grace_ms: None,
            grace_clamped: false,
            coordination: self.process_hint(&p.process_id),
        })
    }

    /// SIGTERM to the whole tree, SIGKILL to what is left after `grace_ms` (the process's
    /// `kill_grace_ms`, which also caps it).
    pub async fn terminate_process(
        &self,
        p: TerminateProcessParams,
    ) -> Result<ProcessAck, GatewayError> {
        let asked = p.grace_ms.map(Duration::from_millis);
        let job = ops::Terminate { id: p.process_id.clone(), grace: asked };
        let outcome = self.runner.run(job).await.map_err(GatewayError::from)?;
        let grace = match outcome {
            Terminate::Sent { grace } => Some(grace),
            Terminate::AlreadyExited => None,
        };
        Ok(ProcessAck {
            ok: true,
            already_exited: grace.is_none(),
            rows: None,
            cols: None,
            grace_ms: grace.map(|g| u64::try_from(g.as_millis()).unwrap_or(u64::MAX)),
            grace_clamped: grace.zip(asked).is_some_and(|(grace, asked)| asked > grace),
            coordination: self.process_hint(&p.process_id),
        })
    }

    /// Ends every live command's whole tree, each with its grace (stdio EOF, SIGTERM,
    /// SIGINT).
    pub async fn shutdown(&self) {
        // An applied patch's terminal record is written before the runner goes.
        self.recorded().await;
        self.runner.shutdown().await;
    }
}

/// A program name with whitespace that was not found is almost always a shell command line
/// sent as one argument: say that no shell reads it, and how to send it.
fn no_shell(e: RunnerError, program: &str) -> RunnerError {
    match e {
        RunnerError::Process(ProcError::SpawnFailed(m))
            if program.contains(char::is_whitespace) =>
        {
            RunnerError::Process(ProcError::SpawnFailed(format!(
                "{m}; command[0] is {program:?}, one program name with spaces in it: no shell is \
                 interposed, so split it into separate argv elements (e.g. [\"ls\", \"-la\"]) \
                 or run [\"sh\", \"-c\", {program:?}]"
            )))
        }
        other => other,
    }
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "tests build their fixtures and inspect results on the host filesystem"
)]
mod tests {
    use std::sync::Arc;

    use codespace_policy::Registry;
    use codespace_process::{Supervisor, SupervisorConfig};
    use codespace_protocol::{ErrorCode, ExecCommandParams, WorkspaceInfoParams};
    use codespace_store::Store;

    use super::*;

    fn gateway(dir: &std::path::Path, missing: &[&str]) -> Gateway {
        for id in ["boxed", "open"] {
            std::fs::create_dir_all(dir.join(id)).unwrap();
        }
        let registry = Registry::parse(
            &serde_json::json!({"workspaces": {
                "boxed": {"root": dir.join("boxed"), "profile": "workspace-write"},
                "open": {"root": dir.join("open"), "profile": "workspace-write", "sandbox": "off"},
            }})
            .to_string(),
        )
        .unwrap();
        let workspaces = crate::Workspaces::open(&registry).unwrap();
        // Never started: every call below is refused before a spawn.
        let supervisor =
            Supervisor::new(SupervisorConfig::new(std::path::PathBuf::from("/nonexistent/reaper")));
        let runner = workspaces
            .local_runner(|roots| codespace_runner::LocalRunner::open(roots, supervisor, true))
            .unwrap();
        let store = Arc::new(Store::open_in_memory().unwrap());
        let missing = missing.iter().map(|m| m.to_string()).collect();
        Gateway::for_tests(workspaces, runner, store, missing)
    }

    /// Decision 5: without the sandbox, a sandbox=on workspace refuses commands naming what
    /// the host lacks, and `workspace_info` says so from the same facts.
    #[tokio::test]
    async fn a_missing_sandbox_refuses_commands_and_names_the_feature() {
        let dir = tempfile::tempdir().unwrap();
        let gw = gateway(dir.path(), &["Landlock ABI 7 (this kernel has 5)"]);
        let exec = |ws: &str| ExecCommandParams {
            workspace_id: ws.to_owned(),
            command: vec!["true".to_owned()],
            tty: None,
            timeout_secs: None,
            work_id: None,
            wait_ms: None,
            max_bytes: None,
        };
        let err = gw.exec_command(exec("boxed")).await.unwrap_err();
        let body = err.to_body();
        assert_eq!(body.code, ErrorCode::Unauthorized);
        assert!(body.message.contains("Landlock ABI 7 (this kernel has 5)"), "{}", body.message);
        let info = gw
            .workspace_info(WorkspaceInfoParams { workspace_id: Some("boxed".to_owned()) })
            .await
            .unwrap();
        let info = serde_json::to_value(info).unwrap();
        assert_eq!(info["execution"]["isolation"]["command_sandbox"], "none", "{info}");
        assert_eq!(info["execution"]["process"]["available"], false, "{info}");
        let open = gw
            .workspace_info(WorkspaceInfoParams { workspace_id: Some("open".to_owned()) })
            .await
            .unwrap();
        let open = serde_json::to_value(open).unwrap();
        assert_eq!(open["execution"]["process"]["available"], true, "{open}");
        assert_eq!(open["execution"]["isolation"]["command_sandbox"], "none", "{open}");

        // With every layer present, the same workspace reports the sandbox.
        let gw = gateway(dir.path(), &[]);
        let info = gw
            .workspace_info(WorkspaceInfoParams { workspace_id: Some("boxed".to_owned()) })
            .await
            .unwrap();
        let info = serde_json::to_value(info).unwrap();
        assert_eq!(info["execution"]["isolation"]["command_sandbox"], "linux-sandbox", "{info}");
    }
}
