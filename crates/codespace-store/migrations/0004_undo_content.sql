-- 0004: the undo log's content in the ledger itself.
--
-- The old content of every planned file that had one is written in the same transaction
-- as the plan (one fsync of the WAL instead of a file, its directory and a second commit),
-- and removed in the transaction that records the terminal result. Content a result names
-- as preserved is first written out to the undo directory beside the ledger
-- (<ledger>.undo/<operation_id>/<ordinal>), where an operator can read and restore it.

CREATE TABLE operation_undo (
    operation_id TEXT NOT NULL REFERENCES operations (operation_id) ON DELETE CASCADE,
    ordinal      INTEGER NOT NULL CHECK (ordinal >= 0),
    content      BLOB NOT NULL,
    UNIQUE (operation_id, ordinal)
) STRICT;
