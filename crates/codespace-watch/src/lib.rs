//! The workspace watcher and what it makes safe: one inotify watcher for every workspace of
//! the process ([`Watcher`]: one inotify instance, one event thread), a watch on each
//! directory beneath each workspace root, each workspace started lazily and best effort,
//! whose events (`{epoch, seq, kind}`, workspace-relative paths) feed its bounded change
//! journal (the `changes` tool), version cache and listing cache, and any subscriber.
//!
//! Architecture Invariant: a cache never answers for a change that completed before the
//! call began. A version is re-checked by identity (device, inode, size, mtime, ctime) with
//! one no-follow stat beneath the root on every hit (relative to its directory, opened
//! beneath the root in the call or held while the watcher vouches for its path, see
//! `versions`) and is only cached once its ctime is safely in the past; a listing answers only after the watcher's own cookie came back
//! through the event stream; `ResyncRequired`, a restart or a failure drops both caches.
//! A watcher failure never fails a file operation: the answer comes from the disk.
//!
//! Architecture Invariant: every file the watcher touches (its cookies, the identity
//! stats, the hashes, the directories it watches) is reached through `codespace_fs::Root`.
//!
//! Architecture Invariant: the watcher never names a path outside the root. A watch is
//! added only on a directory opened beneath the root with no symlink followed, and counts
//! only once the path is checked to still name that directory; a rename or removal drops
//! the watches beneath it before any later event is read; and an event is named only when
//! its directory is still where it was verified, or a later record says it moved since;
//! otherwise it is a `ResyncRequired` (see `tree` and `translate`).
//!
//! # Layout
//! - `event`: [`WatchEvent`], [`EventKind`] and what one inotify record says.
//! - `hub`: [`Watcher`]: the one inotify instance, its event thread (routing each record to
//!   the workspaces whose tables name its watch) and the start thread.
//! - `tree`: one workspace's table of watched directories.
//! - `translate`: what one record means to one workspace, the table kept in step.
//! - `watcher`: [`WorkspaceWatch`]: start, restart, removal, the handler, subscribers.
//! - `answers`: the cached `read_window`, `listing` and `changes`, and the cookie `sync`.
//! - `versions`: the cached `version` of many paths, one stat each, and why it is exact.
//! - `held`: directories held open for those stats, and the mount table's poll.
//! - `cache`: the version and listing caches and their counters ([`CacheStats`]).
//! - `limits`: the host's inotify limits ([`InotifyLimits`]), for `doctor`.
//! - `journal`: the bounded journal and the opaque [`Cursor`].
//! - `subscribe`: [`Subscription`], bounded, lag turned into `ResyncRequired`.

mod answers;
mod cache;
mod event;
mod held;
mod hub;
mod journal;
mod limits;
mod subscribe;
mod translate;
mod tree;
mod versions;
mod watcher;

pub use answers::{START_WAIT, SYNC_TIMEOUT, SyncFailure};
pub use cache::{CacheStats, MAX_DERIVED, MAX_VERSION_ENTRIES, RACY_MARGIN, SETTLE};
pub use event::{COOKIE_PREFIX, EventKind, WatchEvent, is_cookie};
pub use held::MAX_HELD_DIRS;
pub use hub::{Watcher, WatcherReport};
pub use journal::{BadCursor, Changes, Cursor, JOURNAL_EVENTS, MAX_CHANGES};
pub use limits::InotifyLimits;
pub use subscribe::{RecvError, SUBSCRIBER_BUFFER, Subscription};
pub use versions::{HOLD_FROM_HITS, HOLD_SYNC_TIMEOUT};
pub use watcher::{RETRY_AFTER, WatchError, WatchReport, WorkspaceWatch};
