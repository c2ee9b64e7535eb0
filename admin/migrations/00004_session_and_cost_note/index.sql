-- Two columns of the request log, for the Anthropic Messages dialect (issue 15):
--
-- session_id: the client's coding session (Claude Code's `x-claude-code-session-id` header, later
-- Codex's), so one session's requests are found together: the REST filter
-- `sessions_request_response_rmt.session_session_id` reads it through the index below, which also
-- orders a session's requests by time.
--
-- cost_note: why cost_usd is null although tokens were counted (the model is not in the model
-- table, the table has no price for it, or the usage was inconsistent or incomplete), so a record
-- of a model without a price says so instead of carrying a silent null (admin/ingest.ts COST_NOTES).
-- Rows stored before this migration keep both null. Written to run again harmlessly (tests re-run
-- the migrations after an earlier one).
alter table request_log add column if not exists session_id text;
alter table request_log add column if not exists cost_note text;
create index if not exists request_log_org_session_idx on request_log (organization_id, session_id, created_at)
  where session_id is not null;
