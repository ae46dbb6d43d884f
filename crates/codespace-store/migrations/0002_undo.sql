-- 0002: what the undo log needs from the ledger.
--
-- The undo log (a directory beside the ledger file) keeps the before-content of every
-- planned file that has one, under <operation_id>/<ordinal>; the plan row with that ordinal
-- says which path it belongs to. before_mode keeps the permission bits the content is put
-- back with (NULL: the file did not exist, or a row written before this migration).
--
-- A `restored` event records that an operator put preserved content back; it carries no
-- status (the terminal status is never rewritten). SQLite cannot change a CHECK in place,
-- so the events table is rebuilt with the same rows.

ALTER TABLE operation_files
    ADD COLUMN before_mode INTEGER CHECK (before_mode IS NULL OR before_mode BETWEEN 0 AND 4095);

CREATE TABLE operation_events_new (
    operation_id TEXT NOT NULL REFERENCES operations (operation_id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL CHECK (seq >= 1),
    at           INTEGER NOT NULL,
    name         TEXT NOT NULL CHECK (name IN (
                     'minted', 'planned', 'finished', 'recovered', 'restored')),
    status       TEXT CHECK (status IN (
                     'checked', 'applied', 'rejected', 'failed_rolled_back', 'failed_partial',
                     'unknown')),
    reason       TEXT,
    CHECK ((status IS NULL) = (name IN ('minted', 'planned', 'restored'))),
    PRIMARY KEY (operation_id, seq)
) STRICT, WITHOUT ROWID;

INSERT INTO operation_events_new (operation_id, seq, at, name, status, reason)
    SELECT operation_id, seq, at, name, status, reason FROM operation_events;

DROP TABLE operation_events;

ALTER TABLE operation_events_new RENAME TO operation_events;
