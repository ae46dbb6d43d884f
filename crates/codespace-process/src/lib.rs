//! The CodeSpace process supervisor: the engine under `exec_command`, `write_stdin`,
//! `read_process`, `process_status`, `process_resize` and `terminate_process`.
//!
//! Every command runs under its own **reaper shim** ([`reaper_main`], selected by
//! [`REAPER_ARG`], in the `codespace-reaper` binary or the `codespace` binary's hidden
//! role). Shims are forked by a **spawn helper**, one per supervisor, started once from
//! the same binary (`reaper/helper.rs`), so a command costs one exec, its own; the helper
//! keeps one shim forked ahead (a spare, waiting for its request), so a command usually
//! costs one fork too, its own. Without the helper each shim is exec'd directly. The shim
//! is a child
//! subreaper with a parent-death signal: it owns the command's whole tree (daemonized,
//! double-forked and `setsid` escapees included, since orphans are reparented to it). When
//! the supervisor ends a command (on request, at the time limit, at shutdown) the shim
//! sends SIGTERM to all of the tree, and the supervisor has it send SIGKILL to whatever is
//! left once the command's grace ([`SpawnRequest::kill_grace`]) has passed; the shim kills
//! the rest with SIGKILL at once when the command's main process exits, and when the
//! server dies, even by SIGKILL. The shim protocol (arguments,
//! descriptors, reports) is documented in `shim_messages.rs`.
//!
//! The [`Supervisor`] (tokio) holds the handles: one combined output per process (stdout
//! and stderr on one pipe, or the PTY's single stream) with absolute cursors, its newest
//! bytes in a ring in memory and, given a spill directory, older ones in a bounded spill
//! file (so a reader that keeps up loses nothing, and the pipe never blocks), the
//! live limit with slot reservation before any fork, stdin with close, PTY resize,
//! termination intents, and lazy retention of completed handles (TTL and count, injectable
//! [`Clock`]).
//!
//! Commands see exactly the environment of the request and only descriptors 0-2; in pipe
//! mode they have no controlling terminal (new session), on a PTY their own.
//!
//! A request may carry a [`SandboxPolicy`]: the shim then starts the command through
//! [`codespace_sandbox::launch`] (its own user, mount, PID and IPC namespaces, a network
//! namespace when the network is restricted, a private root, a pid cap; Landlock; seccomp;
//! no capabilities). A sandbox that cannot be entered is a spawn failure; the command never
//! runs unconfined instead.
//!
//! **Architecture Invariant:** this crate knows nothing of MCP, the registry, leases or the
//! ledger; the caller releases a lease when [`Spawned::exited`] resolves. Given a directory
//! descriptor ([`SpawnRequest::cwd_dir`]), the server side of it resolves no path of the
//! working directory: the shim enters it with `fchdir` on an inherited copy (and a sandbox
//! binds it from there), and looks the program up relative to it (sandboxed, inside the
//! private root the command sees).
//!
//! # Layout
//! - `supervisor`: [`Supervisor`] (its API in `mod.rs`), with `config` ([`SupervisorConfig`],
//!   [`Clock`]), `start` (spawn and handshake), `table` (handles, slots, retention),
//!   `handle` (one process's state) and `tasks` (pump, stdin writer, supervision).
//! - `spawn`: the spawner thread, starting shims through the spawn helper (pidfds watch
//!   them; requests and descriptors cross [`codespace_sandbox::fdpass`]), else with
//!   posix_spawn for pipes; `spawn/helper.rs` holds the helper and the spare shim it forks
//!   ahead, which the next spawn hands its request to directly.
//! - `reaper`: [`reaper_main`], the shim, with `helper` (the spawn helper), `command`
//!   (starting it, plain or sandboxed; an unconfined command's program is found with
//!   [`codespace_sandbox::PathSearch`] in its working directory), `signals`, `fds` and
//!   `reap`.
//! - `shim`: a started shim as the supervisor holds it, and the signals it sends it.
//! - `shim_messages`: what the shim is told (its arguments) and what it reports.
//! - `tree`: descendants through `/proc`.
//! - `output`: a process's output, the ring plus its spill file.
//! - `ring`: the bounded output ring.
//! - `spill`: spill directories (one per supervisor, locked; swept at start) and files.
//! - `types`, `error`: the public request, report and error types.

mod error;
mod output;
mod reaper;
mod ring;
mod shim;
mod shim_messages;
mod spawn;
mod spill;
mod supervisor;
mod tree;
mod types;

/// The sandbox and external policies a [`SpawnRequest`] may carry (re-exported from
/// `codespace-sandbox`).
pub use codespace_sandbox::{ExternalPolicy, SandboxPolicy};
pub use error::ProcError;
pub use reaper::reaper_main;
pub use spawn::DEFAULT_PATH;
pub use supervisor::{
    Clock, DEFAULT_COMPLETED_TTL, DEFAULT_MAX_COMPLETED, DEFAULT_MAX_LIVE, DEFAULT_RING_BYTES,
    DEFAULT_SPILL_BYTES, REAPER_ARG, SHUTDOWN_GRACE, SHUTDOWN_LIMIT, Supervisor, SupervisorConfig,
    TTY_COLS, TTY_ROWS,
};
pub use types::{
    ExitWatch, ProcStatus, ReadChunk, SpawnRequest, Spawned, Terminate, WaitFor, signal_name,
};
