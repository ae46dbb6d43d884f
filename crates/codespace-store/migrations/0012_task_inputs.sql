-- 0012: what a task waits for.
--
-- A task in input_required keeps the requests its client is asked to answer (input_requests,
-- JSON: key -> request, as tasks/get shows them; only those still unanswered) and, when it
-- waits on a confirmation hold, that hold (approval_id, of 0003's approvals). No process
-- waits in memory for a hold's answer: the answer tasks/update delivers decides the hold and
-- runs it on whichever server sharing the ledger received it, so a waiting task outlives its
-- server. Leaving input_required clears input_requests; approval_id stays as the task's
-- record of the hold it waited on.

ALTER TABLE tasks ADD COLUMN approval_id TEXT;
ALTER TABLE tasks ADD COLUMN input_requests TEXT;
