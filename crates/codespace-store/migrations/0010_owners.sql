-- 0010: which running server owns each piece of unfinished work.
--
-- Every server that serves from this ledger is an instance: a row here and, beside the
-- ledger, a lock file (<ledger>.owners/<instance_id>) it holds an exclusive flock on for
-- its whole life, so any process can tell whether the instance is alive by trying the lock.
-- An operation's owner is the instance that recorded its plan (or that settled it after its
-- owner died); a hold's owner is the instance running a resume of it (queued, resuming).
-- Recovery settles only work whose owner is gone, taking it over with a compare-and-swap on
-- the owner column. Rows written before this migration have no owner: nobody alive owns
-- them, so they are recoverable.

CREATE TABLE instances (
    instance_id TEXT PRIMARY KEY NOT NULL,
    pid         INTEGER NOT NULL CHECK (pid >= 0),
    started_at  INTEGER NOT NULL,
    ended_at    INTEGER
) STRICT;

ALTER TABLE operations ADD COLUMN owner TEXT;

ALTER TABLE approvals ADD COLUMN owner TEXT;
