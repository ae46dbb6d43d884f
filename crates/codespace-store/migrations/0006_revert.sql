-- 0006: reverts and the undo record's retention.
--
-- An applied operation keeps the old content of every file it replaced, moved or deleted
-- (operation_undo) after it finished: its undo record, which operation_revert puts back.
-- reverts names the operation a revert undoes (NULL for a patch); reverted_by is set on
-- that operation, in the transaction that records the revert's plan, to the revert that
-- claimed it, and cleared again when that revert ends without applying, so at most one
-- revert of an operation runs or has applied. undo_pruned_at is when the operator's
-- retention bound (age, total size) dropped the operation's undo record.

ALTER TABLE operations ADD COLUMN reverts TEXT;

ALTER TABLE operations ADD COLUMN reverted_by TEXT;

ALTER TABLE operations ADD COLUMN undo_pruned_at INTEGER;

CREATE INDEX operations_reverts ON operations (reverts) WHERE reverts IS NOT NULL;
