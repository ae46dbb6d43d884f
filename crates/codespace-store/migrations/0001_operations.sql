-- 0001: the patch operation ledger.
--
-- One row per operation, its plan (one row per planned file, in plan order) and its
-- history (one row per event, in order). Keys are scoped to a workspace: the unique index
-- is on (workspace_id, operation_key), so the same key in two workspaces names two
-- operations. A row is unfinished (pending, applying) exactly while finished_at is NULL,
-- and has a result exactly when it is finished. A finished or recovered event carries the
-- terminal status it set; minted and planned events carry none.

CREATE TABLE operations (
    operation_id  TEXT PRIMARY KEY NOT NULL,
    operation_key TEXT,
    workspace_id  TEXT NOT NULL,
    fingerprint   TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN (
                      'pending', 'applying', 'checked', 'applied', 'rejected',
                      'failed_rolled_back', 'failed_partial', 'unknown')),
    result_json   TEXT,
    created_at    INTEGER NOT NULL,
    finished_at   INTEGER,
    CHECK ((finished_at IS NULL) = (status IN ('pending', 'applying'))),
    CHECK ((result_json IS NULL) = (finished_at IS NULL))
) STRICT;

CREATE UNIQUE INDEX operations_workspace_key
    ON operations (workspace_id, operation_key)
    WHERE operation_key IS NOT NULL;

CREATE INDEX operations_unfinished
    ON operations (created_at)
    WHERE finished_at IS NULL;

CREATE TABLE operation_files (
    operation_id   TEXT NOT NULL REFERENCES operations (operation_id) ON DELETE CASCADE,
    ordinal        INTEGER NOT NULL CHECK (ordinal >= 0),
    path           TEXT NOT NULL,
    kind           TEXT NOT NULL CHECK (kind IN ('add', 'update', 'delete', 'move')),
    before_version TEXT NOT NULL,
    after_version  TEXT NOT NULL,
    move_from      TEXT,
    CHECK ((move_from IS NOT NULL) = (kind = 'move')),
    PRIMARY KEY (operation_id, ordinal)
) STRICT, WITHOUT ROWID;

CREATE TABLE operation_events (
    operation_id TEXT NOT NULL REFERENCES operations (operation_id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL CHECK (seq >= 1),
    at           INTEGER NOT NULL,
    name         TEXT NOT NULL CHECK (name IN ('minted', 'planned', 'finished', 'recovered')),
    status       TEXT CHECK (status IN (
                     'checked', 'applied', 'rejected', 'failed_rolled_back', 'failed_partial',
                     'unknown')),
    reason       TEXT,
    CHECK ((status IS NULL) = (name IN ('minted', 'planned'))),
    PRIMARY KEY (operation_id, seq)
) STRICT, WITHOUT ROWID;
