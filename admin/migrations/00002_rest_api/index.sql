-- Indexes for the /v1 REST reads: the filter-tree queries on request_log (always scoped to one
-- organization, newest first), the prompt-2025 listings, environment lookups and dataset rows.

-- Newest-first pages of one organization with a stable tie-break on id.
create index request_log_org_created_id_idx on request_log (organization_id, created_at desc, id desc);
-- request.prompt_id, request.path and request.modelOverride filters.
create index request_log_org_prompt_idx on request_log (organization_id, prompt_id) where prompt_id is not null;
create index request_log_org_path_idx on request_log (organization_id, path);
create index request_log_org_model_override_idx on request_log (organization_id, model_override) where model_override is not null;

-- prompt-2025 listings (by organization and kind, newest first) and tag filters.
create index prompt_org_kind_created_idx on prompt (organization_id, kind, created_at desc);
create index prompt_tags_idx on prompt using gin (tags);
-- environments of a version (Prompt2025Version.environments).
create index prompt_environment_version_idx on prompt_environment (version_id);
-- a dataset's rows in order.
create index dataset_row_position_idx on dataset_row (dataset_id, position);

-- request.prompt contains / ilike / like: a trigram index when pg_trgm is available (it ships with
-- PostgreSQL's contrib and the embedded server). Without it those filters still work, by scanning.
do $$
begin
  create extension if not exists pg_trgm;
exception when others then
  raise notice 'pg_trgm unavailable (%); request.prompt pattern filters will scan', sqlerrm;
end
$$;
do $$
begin
  if exists (select 1 from pg_extension where extname = 'pg_trgm') then
    execute 'create index request_log_prompt_text_trgm_idx on request_log using gin (prompt_text gin_trgm_ops)';
  end if;
end
$$;
