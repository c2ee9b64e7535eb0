-- Keyset paging of the request log (POST /v1/request/query with `before`), its count and the
-- dashboard's time ranges (issue 17): one organization's rows newest first with the id as the
-- tie-break, `(r.created_at, r.id) < ($1, $2)` read as an index range at any depth of a log of
-- millions of rows.
--
-- 00002 created that index (request_log_org_created_id_idx); this makes sure it is there on every
-- database, and drops 00001's (organization_id, created_at desc), a prefix of it that serves no
-- query the longer index does not and costs every insert a second index write.
--
-- postgres-shift runs all pending migrations in one transaction, where CREATE INDEX CONCURRENTLY
-- is refused; so this is a plain CREATE INDEX IF NOT EXISTS, a no-op wherever 00002 ran (every
-- database: migrations run in order). An operator adding an index like it by hand to a large live
-- log would run `create index concurrently` outside the migrations first; this statement then
-- finds it and does nothing. Written to run again harmlessly (tests re-run the migrations).
create index if not exists request_log_org_created_id_idx on request_log (organization_id, created_at desc, id desc);
drop index if exists request_log_org_created_idx;
