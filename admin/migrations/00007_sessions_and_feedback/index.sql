-- Sessions and feedback (issue 18).
--
-- session_path, session_name: a request's place in its session, from the client's
-- `Svc-Session-Path` (a `/`-separated trace path such as `/plan/search`, at most 1024 characters)
-- and `Svc-Session-Name` (at most 256) headers; the session id itself is session_id (migration
-- 00004: `Svc-Session-Id`, else Claude Code's or Codex's own session id). POST /v1/session/query
-- groups an organization's requests by session_id through request_log_org_session_idx (00004),
-- which also gives GET /v1/session/{id} a session's requests in time order.
--
-- request_feedback: a user's thumbs up (rating true) or down (false) on one request, at most one
-- per request (POST /v1/request/{requestId}/feedback again replaces the rating and its time, the
-- id stays); deleted with its request. Rows stored before this migration have neither.
-- Written to run again harmlessly (tests re-run the migrations after an earlier one).
alter table request_log add column if not exists session_path text;
alter table request_log add column if not exists session_name text;

create table if not exists request_feedback (
  id uuid primary key default gen_random_uuid(),
  request_id uuid not null unique references request_log(id) on delete cascade,
  organization_id uuid not null references organization(id) on delete cascade,
  rating boolean not null,
  created_at timestamptz not null default now()
);
