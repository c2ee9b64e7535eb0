-- The response cache (issue 18): three columns of the request log.
--
-- cache_enabled: the request asked for the cache (`Svc-Cache-Enabled: true`), hit or miss.
-- cache_reference_id: a hit: the request whose stored answer was served (the provider was not
-- called); null for every other row. POST /v1/request/query's `isCached` reads it.
-- cost_saved_usd: a hit's cost had it gone to the provider (the served answer's tokens at the
-- model's prices); the hit's own cost_usd is 0.
-- Rows stored before this migration read as not cached. Written to run again harmlessly (tests
-- re-run the migrations after an earlier one).
alter table request_log add column if not exists cache_enabled boolean not null default false;
alter table request_log add column if not exists cache_reference_id uuid;
alter table request_log add column if not exists cost_saved_usd double precision;
create index if not exists request_log_org_cache_hit_idx on request_log (organization_id, created_at desc)
  where cache_reference_id is not null;
