-- 0008: each operation's undo record size, kept beside its row.
--
-- undo_bytes is the size of the old content the ledger keeps for the operation
-- (operation_undo), written with it and zeroed when it is dropped, so the retention bound
-- is checked from a small index of the operations that keep something instead of a scan
-- of the content itself (the index covers the query).

ALTER TABLE operations ADD COLUMN undo_bytes INTEGER NOT NULL DEFAULT 0 CHECK (undo_bytes >= 0);

UPDATE operations SET undo_bytes = (
    SELECT coalesce(sum(length(content)), 0) FROM operation_undo u
    WHERE u.operation_id = operations.operation_id);

CREATE INDEX operations_undo_kept
    ON operations (finished_at, undo_bytes, operation_id, undo_pruned_at) WHERE undo_bytes > 0;
