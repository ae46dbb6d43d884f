-- 0009: what a hold was made for, authenticated; and who wrote each instruction.
--
-- approvals.seal is the server key's HMAC-SHA256 (`hmac-sha256:<hex>`) over the hold's id,
-- workspace, tool, fingerprint, summary, arguments and root_identity, made when the hold
-- was created; root_identity is `<device>:<inode>` of the workspace's root directory then.
-- A resume runs a hold only when both still match. Holds made before this migration have
-- neither and are refused at resume (APPROVAL_UNVERIFIED): a new request makes a new,
-- sealed hold.
--
-- intents.author says who wrote an instruction: the person on /inbox (with the person
-- token) or with the CLI. Instructions written before this migration, when /inbox took the
-- MCP bearer token (so the agent could write there too), are 'unrecorded'.

ALTER TABLE approvals ADD COLUMN seal TEXT;
ALTER TABLE approvals ADD COLUMN root_identity TEXT;

ALTER TABLE intents ADD COLUMN author TEXT NOT NULL DEFAULT 'unrecorded'
    CHECK (author IN ('person-inbox', 'person-cli', 'unrecorded'));
