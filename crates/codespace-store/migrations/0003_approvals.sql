-- 0003: confirmation holds.
--
-- One row per hold in front of an apply_patch or exec_command. params_json holds the
-- tool's full arguments while the hold is active and is NULL (scrubbed) once it is denied
-- or consumed; result_json holds the terminal outcome exactly when it is consumed.
-- operation_id is the ledger id a patch resume reserved when it moved to resuming, so a
-- resume interrupted by a crash finds its ledger row by id. At most one active hold
-- (pending, granted, queued, resuming) exists per workspace and request fingerprint.

CREATE TABLE approvals (
    approval_id  TEXT PRIMARY KEY NOT NULL,
    workspace_id TEXT NOT NULL,
    tool         TEXT NOT NULL CHECK (tool IN ('apply_patch', 'exec_command')),
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

CREATE UNIQUE INDEX approvals_active_fingerprint
    ON approvals (workspace_id, fingerprint)
    WHERE state IN ('pending', 'granted', 'queued', 'resuming');

CREATE INDEX approvals_by_created ON approvals (created_at);
