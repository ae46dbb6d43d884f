//! The durable SQLite ledger of patch operations, confirmation holds, works and their user
//! instructions, and the undo log beside it.
//!
//! Every `apply_patch` is one row: minted in memory by [`Store::draft`] (which also decides
//! replay and key conflicts, writing nothing), written with its plan and the old content
//! of every file it replaces by [`Store::plan_draft`] before the first write, and closed
//! exactly once by [`Store::finish_draft`] (which inserts it finished when it had no plan),
//! or, after a crash, by [`Store::recover`] once the caller has classified the disk against
//! the recorded before- and after-versions. `operation_status` reads it back with
//! [`Store::get`] and [`Store::get_by_key`].
//!
//! The file is SQLite in WAL mode with `synchronous=FULL` (an acknowledged call survives
//! a crash or power loss), `foreign_keys=ON`, a 5 s busy timeout and `BEGIN IMMEDIATE`
//! writers, so concurrent handles and processes wait for each other instead of failing.
//! A file ledger also keeps a read-only connection for [`Store::change_stamp`] and
//! [`Store::works_read`]: in WAL mode a reader never waits for a writer.
//! The schema comes from numbered migrations (`migrations/NNNN_name.sql`, version in
//! `PRAGMA user_version`). Opening refuses a symlinked path, a network filesystem, a WAL
//! without its database and a database that fails `PRAGMA integrity_check`.
//!
//! **Architecture Invariant:** this crate knows nothing of MCP, rmcp, the gateway or the
//! filesystem crate. Result JSON is stored as an opaque string; paths in a plan are opaque
//! workspace-relative strings; versions, change kinds and event names are the shared types
//! of `codespace-types`, stored as the same TEXT as before.
//!
//! **Architecture Invariant:** keys are scoped to a workspace (`UNIQUE(workspace_id,
//! operation_key)`), a terminal status and its result are written once and never
//! overwritten, and a storage failure is always its own [`StoreError`] variant, never a
//! "not found" (a missing operation is `Ok(None)`).
//!
//! Several processes may serve from one ledger file. Each server is an instance
//! ([`Store::start_instance`]: a row and a lock beside the ledger held for its life), and the
//! work it records names it as owner: an operation's row from its plan on, a hold from the
//! resume that claims it. A row is closed, and a claimed hold moved, only by its owner;
//! another process takes work over only from an owner that is gone
//! ([`Store::owner_alive`], then [`Store::take_over_operation`] or
//! [`Store::take_over_hold`], one compare-and-swap each), so a dead server's work is settled
//! exactly once and a live server's never. A handle that started no instance (the
//! operator's CLI) owns nothing.
//!
//! The API is synchronous; async callers use `spawn_blocking`.
//!
//! # Layout
//! - `model`: [`OpStatus`], [`PlannedFile`], [`Event`], [`OperationRecord`], the holds.
//! - `error`: [`StoreError`].
//! - `hygiene`: open-time checks of the path and its sidecar files.
//! - `instance`: a running server's lock beside the ledger, and the liveness test of one.
//! - `migrate`: the embedded migrations and [`SCHEMA_VERSION`].
//! - `store`: [`Store`], its transactions and the ledger calls, one module per job;
//!   `store/works.rs` holds the rows of works and intents ([`WorkRow`], [`IntentRow`]) and
//!   the transaction handle ([`Works`]) the gateway decides through, with its statements and
//!   column checks beneath it.
//! - `undo`: [`UndoLog`], the before-content of planned files, beside the ledger file.

mod error;
mod hygiene;
mod instance;
mod migrate;
mod model;
mod store;
mod undo;

pub use codespace_types::{
    ApprovalState, ChangeKind, Decision, Delivery, EventName, HeldTool, IntentKind, IntentState,
    Version, WorkState,
};
pub use error::StoreError;
pub use migrate::SCHEMA_VERSION;
pub use model::{
    Cas, Event, HoldFilter, HoldRecord, InstanceRow, NewHold, OpStatus, OperationRecord,
    PlannedFile, Retention, UndoKept,
};
pub use store::{
    BUSY_TIMEOUT, ChangeStamp, CommitObserver, Draft, Drafted, IntentRow, KEPT_ENDED_INSTANCES,
    Store, Tally, TaskRow, TaskSettle, WorkRow, Works,
};
pub use undo::UndoLog;
