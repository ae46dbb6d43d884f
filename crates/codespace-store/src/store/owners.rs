//! Ownership of unfinished work: this process's instance (a row and a held lock), whether
//! another instance is alive, and taking over the work of a dead one with one
//! compare-and-swap on the owner column, so exactly one process settles it.

use rusqlite::params;

use super::Store;
use crate::error::StoreError;
use crate::instance::{self, Instance};
use crate::model::{Cas, InstanceRow};

/// Ended instances the ledger keeps a row of (the newest), for `codespace operations`.
pub const KEPT_ENDED_INSTANCES: i64 = 100;

impl Store {
    /// Makes this process a running instance of the ledger: its lock is taken beside the
    /// ledger (held until the store is dropped or the process dies), then its row is
    /// written. From here on the operations it records and the holds it resumes are its
    /// own, and no other process settles them while it lives. Refused when called twice.
    pub fn start_instance(&self, pid: u32, now: i64) -> Result<String, StoreError> {
        if self.instance.get().is_some() {
            return Err(StoreError::InvalidInput {
                reason: "this ledger handle is already a running instance".to_owned(),
            });
        }
        let claimed = Instance::claim(self.owners.as_deref())?;
        let id = claimed.id.clone();
        self.write(|conn| {
            conn.prepare_cached(
                "INSERT INTO instances (instance_id, pid, started_at) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![id, i64::from(pid), now])?;
            Ok(())
        })?;
        self.instance.set(claimed).map_err(|_| StoreError::InvalidInput {
            reason: "this ledger handle became a running instance twice".to_owned(),
        })?;
        Ok(id)
    }

    /// This process's instance id, once it started one; `None` for an operator's handle.
    pub fn instance_id(&self) -> Option<&str> {
        self.instance.get().map(|i| i.id.as_str())
    }

    /// Whether `owner` is a running instance: this process's own, or one whose lock is
    /// held. `None` (work recorded before owners existed, or by an operator's handle) is
    /// owned by nobody alive.
    pub fn owner_alive(&self, owner: Option<&str>) -> bool {
        let Some(owner) = owner else { return false };
        if self.instance_id() == Some(owner) {
            return true;
        }
        match &self.owners {
            Some(dir) => instance::alive(dir, owner),
            // An in-memory ledger is this process's alone.
            None => false,
        }
    }

    /// Every instance row, newest first, with whether it is alive now.
    pub fn instances(&self) -> Result<Vec<InstanceRow>, StoreError> {
        let rows = self.read(|conn| {
            let mut statement = conn.prepare_cached(
                "SELECT instance_id, pid, started_at, ended_at FROM instances \
                 ORDER BY started_at DESC, rowid DESC",
            )?;
            let rows = statement.query_map([], |row| {
                Ok(InstanceRow {
                    instance_id: row.get(0)?,
                    pid: row.get(1)?,
                    started_at: row.get(2)?,
                    ended_at: row.get(3)?,
                    alive: false,
                })
            })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })?;
        Ok(rows
            .into_iter()
            .map(|r| InstanceRow {
                alive: r.ended_at.is_none() && self.owner_alive(Some(&r.instance_id)),
                ..r
            })
            .collect())
    }

    /// Marks every instance that ended without saying so (its lock is free) as ended, and
    /// removes its lock file; returns their ids. Best effort on the files. Then forgets the
    /// ended instances beyond the newest [`KEPT_ENDED_INSTANCES`]: every server start adds
    /// a row, and nothing reads an old one (an owner column naming a forgotten instance is
    /// owned by nobody alive, as before).
    pub fn end_dead_instances(&self, now: i64) -> Result<Vec<String>, StoreError> {
        let Some(dir) = self.owners.clone() else { return Ok(vec![]) };
        let open: Vec<String> = self.read(|conn| {
            let mut statement =
                conn.prepare_cached("SELECT instance_id FROM instances WHERE ended_at IS NULL")?;
            let ids = statement.query_map([], |row| row.get(0))?;
            Ok(ids.collect::<Result<Vec<String>, _>>()?)
        })?;
        let mut ended = Vec::new();
        for id in open {
            if self.instance_id() == Some(id.as_str()) || !instance::reap(&dir, &id) {
                continue;
            }
            self.write(|conn| {
                conn.prepare_cached(
                    "UPDATE instances SET ended_at = ?2 WHERE instance_id = ?1 AND ended_at IS NULL",
                )?
                .execute(params![id, now])?;
                Ok(())
            })?;
            ended.push(id);
        }
        self.write(|conn| {
            conn.prepare_cached(
                "DELETE FROM instances WHERE ended_at IS NOT NULL AND instance_id NOT IN \
                 (SELECT instance_id FROM instances WHERE ended_at IS NOT NULL \
                  ORDER BY ended_at DESC, rowid DESC LIMIT ?1)",
            )?
            .execute(params![KEPT_ENDED_INSTANCES])?;
            Ok(())
        })?;
        Ok(ended)
    }

    /// Takes an unfinished operation over from `from`, its owner as read (dead, or `None`):
    /// one compare-and-swap on the owner, so of every process that noticed, exactly one
    /// gets `true` and settles it. `false`: finished meanwhile, or taken by another.
    pub fn take_over_operation(
        &self,
        operation_id: &str,
        from: Option<&str>,
    ) -> Result<bool, StoreError> {
        let me = self.instance_id();
        self.write(|conn| {
            let changed = conn
                .prepare_cached(
                    "UPDATE operations SET owner = ?3 WHERE operation_id = ?1 \
                     AND finished_at IS NULL AND owner IS ?2",
                )?
                .execute(params![operation_id, from, me])?;
            Ok(changed == 1)
        })
    }

    /// Takes a `queued` or `resuming` hold over from `from`, its owner as read (dead, or
    /// `None`: no resume runs it): one compare-and-swap on the owner.
    pub fn take_over_hold(&self, approval_id: &str, from: Option<&str>) -> Result<Cas, StoreError> {
        let sql = "UPDATE approvals SET owner = ?3 WHERE approval_id = ?1 \
                   AND state IN ('queued', 'resuming') AND owner IS ?2";
        self.swap(approval_id, sql, params![approval_id, from, self.instance_id()])
    }

    /// A `queued` hold this instance claimed but did not run (a lease refusal): no longer
    /// owned, so any server may resume it.
    pub fn release_hold(&self, approval_id: &str) -> Result<Cas, StoreError> {
        let sql = "UPDATE approvals SET owner = NULL WHERE approval_id = ?1 \
                   AND state = 'queued' AND owner IS ?2";
        self.swap(approval_id, sql, params![approval_id, self.instance_id()])
    }
}
