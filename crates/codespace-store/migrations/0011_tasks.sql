-- 0011: tasks of the MCP Tasks extension, written before the client hears of them.
--
-- A task is one tool call the client asked to run in the background. Its row is committed
-- before the call answers with the task id, so the task outlives its server: a task whose
-- owner (an instance, as in 0010) is gone is settled by the next server that reads it, from
-- what the ledger knows (an apply_patch task from its operation, found by operation_key in
-- its workspace; a command or a search task failed, since nothing reruns it). state moves
-- working <-> input_required, then to one terminal state that never changes; result (a
-- completed task's tool result) and error (a failed task's JSON-RPC error) are JSON.
-- cancel_requested is set by tasks/cancel; the owner stops the work and settles cancelled.

CREATE TABLE tasks (
    task_id          TEXT PRIMARY KEY NOT NULL,
    tool             TEXT NOT NULL,
    workspace_id     TEXT,
    operation_key    TEXT,
    process_id       TEXT,
    owner            TEXT,
    state            TEXT NOT NULL CHECK (state IN (
                         'working', 'input_required', 'completed', 'failed', 'cancelled')),
    status_message   TEXT,
    result           TEXT,
    error            TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),
    ttl_ms           INTEGER CHECK (ttl_ms >= 0),
    created_at_ms    INTEGER NOT NULL,
    updated_at_ms    INTEGER NOT NULL,
    CHECK ((result IS NULL) OR state = 'completed'),
    CHECK ((error IS NULL) OR state = 'failed')
) STRICT;

CREATE INDEX tasks_unsettled ON tasks (owner) WHERE state IN ('working', 'input_required');
