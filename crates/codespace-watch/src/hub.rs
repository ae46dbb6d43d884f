//! [`Watcher`]: the one inotify watcher that serves every workspace of a process. One inotify
//! instance (so a host's per-user instance limit, 128 by default, never bounds how many
//! workspaces are watched), one event thread that reads its queue and hands each record to
//! every workspace whose watch table names the record's watch, and at most one start thread
//! at a time that walks the workspaces waiting to be watched, one after another.
//!
//! Each workspace's table (see `tree`) is built by the start thread off the hub's lock, one
//! watch at a time under it; records for a table still being built are kept in order and
//! handed over when it is installed, so the table sees every record after the watch that
//! caused it, as it would with an instance of its own. A watch two tables share (nested
//! workspaces) is removed from the kernel only when neither names it. When the kernel's
//! watch limit is reached, the workspace whose table could not be built gives back every
//! watch it had added, says so (`workspace_info`, the log) and answers uncached.
//!
//! Lock order: the hub's lock, then a workspace's state lock (the handler and the start's
//! finish run under both); nothing takes the hub's lock holding a workspace's.

mod instance;
mod tables;

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use codespace_fs::{ParentDir, Root};

use crate::translate::{Live, Record};
use crate::tree::Tree;
use crate::watcher::{Shared, Status, WorkspaceWatch, finish_start, precheck};

use instance::Instance;
use tables::Locking;

/// Records kept for a table still being built; past it the table starts as if the kernel's
/// queue had overflowed (its default `max_queued_events`).
const BUILD_BUFFER: usize = 16_384;

/// The process's workspace watcher: one inotify instance and one event thread for every
/// workspace added to it. Cloning shares it; the instance and its thread go when the last
/// clone and the last [`WorkspaceWatch`] it made are dropped.
#[derive(Clone)]
pub struct Watcher {
    core: Arc<Core>,
}

/// How many workspaces a [`Watcher`] serves and how.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WatcherReport {
    /// Workspaces added and not removed.
    pub workspaces: u64,
    /// Workspaces whose table is installed (their watcher runs).
    pub running: u64,
    /// Workspaces whose table is being built or waits for the start thread.
    pub starting: u64,
    /// Watches in the kernel (one per directory, shared between nested workspaces).
    pub watches: u64,
    /// Inotify instances open: 0 before the first start, else 1.
    pub instances: u64,
}

impl Watcher {
    /// A watcher with no workspace; nothing is opened before a workspace's first start.
    pub fn new() -> Watcher {
        Watcher { core: Arc::new(Core { state: Mutex::new(State::default()) }) }
    }

    /// Adds a workspace root: it is watched from its first use
    /// ([`WorkspaceWatch::ensure_started`]) until [`Watcher::remove_root`] or the handle's
    /// drop gives its watches back.
    pub fn add_root(&self, root: Arc<Root>) -> WorkspaceWatch {
        let mut state = self.core.lock();
        state.next_key += 1;
        let key = state.next_key;
        let watch = WorkspaceWatch::registered(Arc::clone(&root), Arc::clone(&self.core), key);
        let member = Member { shared: Arc::downgrade(&watch.shared), root, slot: Slot::Idle };
        state.members.insert(key, member);
        watch
    }

    /// Removes a workspace root now: its watches go, its subscribers are closed, and it
    /// answers uncached from then on (its state `failed`, saying it is no longer watched).
    pub fn remove_root(&self, watch: &WorkspaceWatch) {
        watch.remove();
    }

    /// How many workspaces this watcher serves, and with how many watches.
    pub fn report(&self) -> WatcherReport {
        let state = self.core.lock();
        let mut report = WatcherReport {
            workspaces: state.members.len() as u64,
            watches: state.users.len() as u64,
            instances: u64::from(state.instance.is_some()),
            ..WatcherReport::default()
        };
        for m in state.members.values() {
            match m.slot {
                Slot::Running { .. } => report.running += 1,
                Slot::Building { .. } => report.starting += 1,
                Slot::Idle => {}
            }
        }
        report.starting += state.jobs.len() as u64;
        report
    }
}

impl Default for Watcher {
    fn default() -> Watcher {
        Watcher::new()
    }
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher").field("report", &self.report()).finish()
    }
}

pub(crate) struct Core {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    instance: Option<Instance>,
    next_instance: u64,
    members: HashMap<u64, Member>,
    next_key: u64,
    /// The tables that name each watch.
    users: HashMap<i32, Vec<u64>>,
    /// Every table being built or installed, and whose it is.
    tables: HashMap<u64, u64>,
    next_table: u64,
    /// Starts waiting for the start thread, and whether it runs.
    jobs: VecDeque<Job>,
    starter: bool,
}

/// One workspace as the hub holds it.
struct Member {
    shared: Weak<Shared>,
    root: Arc<Root>,
    slot: Slot,
}

enum Slot {
    Idle,
    Building { table: u64, buffer: Vec<Record>, overflowed: bool },
    Running { table: u64, generation: u64, live: Live },
}

#[derive(Debug, Clone, Copy)]
struct Job {
    key: u64,
    generation: u64,
    new_epoch: bool,
}

/// Where a workspace's watcher stood just before a directory was opened to be held: its
/// epoch, the events it had handled, and the mount table's generation.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HoldPoint {
    pub(crate) epoch: u64,
    pub(crate) seq: u64,
    pub(crate) mounts: u64,
}

/// One start under way: whose, which, and the table it builds on which instance.
#[derive(Debug, Clone, Copy)]
struct Start {
    key: u64,
    generation: u64,
    new_epoch: bool,
    table: u64,
    instance: u64,
}

impl Core {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues a start of workspace `key` for the start thread (started if none runs).
    pub(crate) fn queue(
        self: &Arc<Self>,
        key: u64,
        generation: u64,
        new_epoch: bool,
    ) -> Result<(), String> {
        let mut state = self.lock();
        state.jobs.push_back(Job { key, generation, new_epoch });
        if state.starter {
            return Ok(());
        }
        let core = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("codespace-watch-start".to_owned())
            .spawn(move || core.starts());
        match spawned {
            Ok(_) => {
                state.starter = true;
                Ok(())
            }
            Err(e) => {
                state.jobs.pop_back();
                Err(format!("no thread to start the watcher: {e}"))
            }
        }
    }

    /// The start thread: every queued start, one after another, then it ends.
    fn starts(self: &Arc<Self>) {
        loop {
            let (job, shared) = {
                let mut state = self.lock();
                let Some(job) = state.jobs.pop_front() else {
                    state.starter = false;
                    return;
                };
                let shared = state.members.get(&job.key).and_then(|m| m.shared.upgrade());
                (job, shared)
            };
            if let Some(shared) = shared {
                let _reported = self.build(job.key, &shared, job.generation, job.new_epoch);
            }
        }
    }

    /// Builds workspace `key`'s table, installs it and hands it the records that came
    /// meanwhile; the workspace's state says how it went (see [`finish_start`]).
    pub(crate) fn build(
        self: &Arc<Self>,
        key: u64,
        shared: &Arc<Shared>,
        generation: u64,
        new_epoch: bool,
    ) -> Result<(), String> {
        let begun = precheck(shared).and_then(|()| self.begin(key, shared, generation));
        let (table, instance, root) = match begun {
            Ok(begun) => begun,
            Err(reason) => {
                finish_start(shared, generation, Err(reason.clone()), new_epoch);
                return Err(reason);
            }
        };
        let tree = Tree::start(&root, &mut Locking { core: self, table, instance });
        self.lock().install(Start { key, generation, new_epoch, table, instance }, shared, tree)
    }

    /// Marks workspace `key` as being built in a new table (giving back the old one), with
    /// the instance opened if it is not; its table id, the instance and the root. A start
    /// that a later one superseded (a restart while it was queued) builds nothing and
    /// leaves the later one's table alone.
    fn begin(
        self: &Arc<Self>,
        key: u64,
        shared: &Shared,
        generation: u64,
    ) -> Result<(u64, u64, Arc<Root>), String> {
        let mut state = self.lock();
        if !state.members.contains_key(&key) {
            return Err("the workspace is no longer watched".to_owned());
        }
        if shared.lock().generation != generation {
            return Err("a later start superseded this one".to_owned());
        }
        state.stop(key);
        let instance = match &state.instance {
            Some(i) => i.id,
            None => {
                state.next_instance += 1;
                let id = state.next_instance;
                let opened = Instance::open(id, Arc::downgrade(self))?;
                state.instance = Some(opened);
                id
            }
        };
        state.next_table += 1;
        let table = state.next_table;
        state.tables.insert(table, key);
        let member = state.members.get_mut(&key).ok_or("the workspace is no longer watched")?;
        member.slot = Slot::Building { table, buffer: Vec::new(), overflowed: false };
        Ok((table, instance, Arc::clone(&member.root)))
    }

    /// Holds `dir` for workspace `key`'s identity checks (see `held`) if the watcher can
    /// vouch that every later change to what its path names will reach it: at `at` (taken
    /// before `dir` was opened) the watcher ran, it has handled no event since, and its
    /// table watches every directory above `dir` (where a rename, removal or replacement of
    /// `dir` or of one above it is reported). Under the hub's lock no record is being
    /// handled, so the table and the event count agree.
    pub(crate) fn hold(&self, key: u64, shared: &Shared, at: HoldPoint, dir: ParentDir) {
        let state = self.lock();
        let Some(Member { slot: Slot::Running { generation, live, .. }, .. }) =
            state.members.get(&key)
        else {
            return;
        };
        let mut inner = shared.lock();
        let unchanged = matches!(inner.status, Status::Running)
            && inner.generation == *generation
            && inner.epoch == at.epoch
            && inner.seq == at.seq;
        let path = dir.path();
        let mut above = std::iter::once("")
            .chain(path.match_indices('/').map(|(i, _)| &path[..i]))
            .filter(|_| !path.is_empty());
        let watched = above.all(|a| live.tree.wd_at(a).is_some());
        if unchanged && watched {
            inner.caches.held.hold(dir, at.epoch, at.mounts);
        }
    }

    /// Removes workspace `key`: its table goes, and a start under way is given up.
    pub(crate) fn remove(&self, key: u64) {
        let mut state = self.lock();
        state.stop(key);
        state.members.remove(&key);
        state.jobs.retain(|j| j.key != key);
    }
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "tests build their fixtures and change them on the host filesystem"
)]
mod tests;
