-- 0007: a confirmation hold may stand in front of operation_revert too.
--
-- SQLite cannot change a CHECK in place, so the approvals table is rebuilt with the same
-- columns, rows and indexes, its tool column accepting 'operation_revert' as well. A revert
-- hold reserves a ledger id on resume, as a patch hold does.

CREATE TABLE approvals_new (
    approval_id  TEXT PRIMARY KEY NOT NULL,
    workspace_id TEXT NOT NULL,
    tool         TEXT NOT NULL CHECK (tool IN ('apply_patch', 'exec_command', 'operation_revert')),
    fingerprint  TEXT NOT NULL CHECK (fingerprint <> ''),
    summary      TEXT NOT NULL,
    params_json  TEXT,
    state        TEXT NOT NULL CHECK (state IN (
                     'pending', 'granted', 'queued', 'resuming', 'denied', 'consumed')),
    created_at   INTEGER NOT NULL,
    resolved_at  INTEGER,
    operation_id TEXT,
    result_json  TEXT,
    CHECK ((params_json IS NULL) = (state IN ('denied', 'consumed'))),
    CHECK ((result_json IS NOT NULL) = (state = 'consumed')),
    CHECK ((resolved_at IS NULL) = (state = 'pending'))
) STRICT;

INSERT INTO approvals_new (approval_id, workspace_id, tool, fingerprint, summary, params_json,
                           state, created_at, resolved_at, operation_id, result_json)
    SELECT approval_id, workspace_id, tool, fingerprint, summary, params_json, state,
           created_at, resolved_at, operation_id, result_json
    FROM approvals;

DROP TABLE approvals;

ALTER TABLE approvals_new RENAME TO approvals;

CREATE UNIQUE INDEX approvals_active_fingerprint
    ON approvals (workspace_id, fingerprint)
    WHERE state IN ('pending', 'granted', 'queued', 'resuming');

CREATE INDEX approvals_by_created ON approvals (created_at);
