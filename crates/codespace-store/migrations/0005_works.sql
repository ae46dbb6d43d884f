-- 0005: works and the queue of user instructions (intents).
--
-- A work is one logical job of an agent in one workspace; its intents are what the person
-- said to the agent while it ran. An intent with no work_id waits for the next work opened
-- in its workspace. queue_revision grows with every change to a work's intents, so a
-- client can tell that something changed without reading the queue. position orders a
-- work's queue (lower first); revision grows with every change to one intent and is the
-- compare-and-swap token of edits and claims.

CREATE TABLE works (
    work_id        TEXT PRIMARY KEY NOT NULL,
    workspace_id   TEXT NOT NULL,
    title          TEXT,
    state          TEXT NOT NULL CHECK (state IN ('active', 'closing', 'closed', 'cancelled')),
    queue_revision INTEGER NOT NULL DEFAULT 0 CHECK (queue_revision >= 0),
    created_at     INTEGER NOT NULL,
    closed_at      INTEGER,
    CHECK ((closed_at IS NULL) = (state IN ('active', 'closing')))
) STRICT;

CREATE INDEX works_workspace ON works (workspace_id, state);

CREATE TABLE intents (
    intent_id    TEXT PRIMARY KEY NOT NULL,
    work_id      TEXT REFERENCES works (work_id),
    workspace_id TEXT NOT NULL,
    position     INTEGER NOT NULL,
    revision     INTEGER NOT NULL DEFAULT 1 CHECK (revision >= 1),
    kind         TEXT NOT NULL CHECK (kind IN ('follow_up', 'note', 'stop_notice')),
    delivery     TEXT NOT NULL CHECK (delivery IN (
                     'next_checkpoint', 'after_current_work', 'next_work')),
    body         TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN (
                     'draft', 'queued', 'claimed', 'done', 'blocked', 'cancelled',
                     'superseded')),
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    claimed_at   INTEGER,
    completed_at INTEGER
) STRICT;

CREATE INDEX intents_work ON intents (work_id, state, position);

CREATE INDEX intents_unattached ON intents (workspace_id, state) WHERE work_id IS NULL;
