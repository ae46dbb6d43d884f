//! The hub's tables: installing the one a start built, giving one back, routing each
//! record to the tables that name its watch, and the kernel as a table sees it (every
//! watch counted per table, removed from the kernel when no table counts it).

use std::collections::HashMap;
use std::sync::Arc;

use rustix::io::Errno;

use super::{BUILD_BUFFER, Core, Instance, Slot, Start, State};
use crate::event::{Classified, Lost};
use crate::translate::{Live, Record};
use crate::tree::{Kernel, Tree};
use crate::watcher::{Shared, finish_start, handler};

impl State {
    /// The kernel as table `table` sees it.
    pub(super) fn kernel(&mut self, table: u64) -> Wds<'_> {
        Wds { instance: self.instance.as_ref(), users: &mut self.users, table }
    }

    /// Installs the table a start built (or records why there is none) and hands it the
    /// records that came meanwhile, in order, before any later one.
    pub(super) fn install(
        &mut self,
        start: Start,
        shared: &Shared,
        tree: Result<Tree, String>,
    ) -> Result<(), String> {
        let Start { key, generation, new_epoch, table, instance } = start;
        let same_instance = self.instance.as_ref().is_some_and(|i| i.id == instance);
        let current = same_instance
            && self
                .members
                .get(&key)
                .is_some_and(|m| matches!(m.slot, Slot::Building { table: t, .. } if t == table));
        if !current {
            // Given up meanwhile (removed, restarted, or the instance lost): its watches
            // go back, unless the instance they were numbered in is gone with them.
            if let (Ok(mut tree), true) = (tree, same_instance) {
                tree.forget("", &mut self.kernel(table));
            }
            let reason = "the start was given up (the workspace was removed or restarted)";
            finish_start(shared, generation, Err(reason.to_owned()), new_epoch);
            return Err(reason.to_owned());
        }
        let tree = match tree {
            Ok(tree) => tree,
            Err(reason) => {
                self.stop(key);
                finish_start(shared, generation, Err(reason.clone()), new_epoch);
                return Err(reason);
            }
        };
        let Some(member) = self.members.get_mut(&key) else { return Ok(()) };
        let live = Live::new(tree, Arc::clone(&member.root));
        let running = Slot::Running { table, generation, live };
        let Slot::Building { buffer, overflowed, .. } =
            std::mem::replace(&mut member.slot, running)
        else {
            return Ok(());
        };
        if !finish_start(shared, generation, Ok(()), new_epoch) {
            self.stop(key);
            return Ok(());
        }
        let buffer = if overflowed { vec![Record::overflow()] } else { buffer };
        for (i, rec) in buffer.iter().enumerate() {
            self.route_one(key, table, rec, &buffer[i + 1..]);
        }
        Ok(())
    }

    /// Gives back workspace `key`'s table, built or being built; it goes idle.
    pub(super) fn stop(&mut self, key: u64) {
        let Some(member) = self.members.get_mut(&key) else { return };
        match std::mem::replace(&mut member.slot, Slot::Idle) {
            Slot::Idle => {}
            Slot::Building { table, .. } => {
                self.tables.remove(&table);
            }
            Slot::Running { table, mut live, .. } => {
                self.tables.remove(&table);
                live.tree.forget("", &mut wds(&self.instance, &mut self.users, table));
            }
        }
    }

    /// Hands every record of one read to the tables that name its watch (an overflow to
    /// every table).
    pub(super) fn route(&mut self, records: &[Record]) {
        for (i, rec) in records.iter().enumerate() {
            let tables: Vec<(u64, u64)> = if rec.wd == -1 {
                self.tables.iter().map(|(t, k)| (*t, *k)).collect()
            } else {
                let users = self.users.get(&rec.wd).map_or(&[][..], Vec::as_slice);
                users.iter().filter_map(|t| self.tables.get(t).map(|k| (*t, *k))).collect()
            };
            for (table, key) in tables {
                self.route_one(key, table, rec, &records[i + 1..]);
            }
        }
    }

    /// One record for table `table` of workspace `key`: kept while the table is being
    /// built, else translated and handled; a workspace whose watcher must stop gives its
    /// table back.
    fn route_one(&mut self, key: u64, table: u64, rec: &Record, later: &[Record]) {
        let Some(member) = self.members.get_mut(&key) else { return };
        match &mut member.slot {
            Slot::Building { table: t, buffer, overflowed, .. } if *t == table => {
                if buffer.len() >= BUILD_BUFFER {
                    buffer.clear();
                    *overflowed = true;
                }
                if !*overflowed {
                    buffer.push(rec.clone());
                }
            }
            Slot::Running { table: t, generation, live } if *t == table => {
                let classified =
                    live.translate(rec, later, &mut wds(&self.instance, &mut self.users, table));
                let go_on = member
                    .shared
                    .upgrade()
                    .is_some_and(|shared| handler::deliver(&shared, *generation, classified));
                if !go_on {
                    self.stop(key);
                }
            }
            Slot::Idle | Slot::Building { .. } | Slot::Running { .. } => {}
        }
    }

    /// Reading the queue failed: every running workspace is told and stops, and the
    /// instance goes (the next start opens another).
    pub(super) fn lost_instance(&mut self) {
        let keys: Vec<u64> = self.members.keys().copied().collect();
        for key in keys {
            let Some(member) = self.members.get(&key) else { continue };
            if let (Slot::Running { generation, .. }, Some(shared)) =
                (&member.slot, member.shared.upgrade())
            {
                let lost = Classified {
                    kinds: vec![crate::EventKind::ResyncRequired],
                    lost: Some(Lost::ReadFailed),
                    ..Classified::default()
                };
                handler::deliver(&shared, *generation, lost);
            }
            self.stop(key);
        }
        self.instance = None;
        self.users.clear();
    }
}

/// The instance as table `table` sees it, the hub's lock held.
fn wds<'a>(
    instance: &'a Option<Instance>,
    users: &'a mut HashMap<i32, Vec<u64>>,
    table: u64,
) -> Wds<'a> {
    Wds { instance: instance.as_ref(), users, table }
}

/// The instance as one table sees it, the hub's lock held.
pub(super) struct Wds<'a> {
    instance: Option<&'a Instance>,
    users: &'a mut HashMap<i32, Vec<u64>>,
    table: u64,
}

impl Kernel for Wds<'_> {
    fn add_watch(&mut self, magic: &str) -> Result<i32, Errno> {
        let instance = self.instance.ok_or(Errno::CANCELED)?;
        let wd = instance.add_watch(magic)?;
        let users = self.users.entry(wd).or_default();
        if !users.contains(&self.table) {
            users.push(self.table);
        }
        Ok(wd)
    }

    fn release(&mut self, wd: i32) {
        let Some(users) = self.users.get_mut(&wd) else { return };
        users.retain(|t| *t != self.table);
        if users.is_empty() {
            self.users.remove(&wd);
            if let Some(instance) = self.instance {
                instance.remove_watch(wd);
            }
        }
    }
}

/// The instance as a table being built sees it: the hub's lock taken for each watch, and
/// `ECANCELED` once the table was given up.
pub(super) struct Locking<'a> {
    pub(super) core: &'a Core,
    pub(super) table: u64,
    pub(super) instance: u64,
}

impl Kernel for Locking<'_> {
    fn add_watch(&mut self, magic: &str) -> Result<i32, Errno> {
        let mut state = self.core.lock();
        let current = state.tables.contains_key(&self.table)
            && state.instance.as_ref().is_some_and(|i| i.id == self.instance);
        if !current {
            return Err(Errno::CANCELED);
        }
        state.kernel(self.table).add_watch(magic)
    }

    fn release(&mut self, wd: i32) {
        let mut state = self.core.lock();
        if state.instance.as_ref().is_some_and(|i| i.id == self.instance) {
            state.kernel(self.table).release(wd);
        }
    }
}
