-- Organizations, API keys, the request log, scores, prompts (legacy and 2025) and datasets.
create table organization (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  created_at timestamptz not null default now()
);

-- API keys are stored as the hex SHA-256 of the key; the key itself is shown once, at creation.
create table api_key (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organization(id) on delete cascade,
  name text not null,
  key_hash text not null unique,
  prefix text not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
create index api_key_org_idx on api_key (organization_id);

-- Prompts: one table for legacy prompts (user_defined_id) and prompt-2025 prompts (name, tags).
create table prompt (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organization(id) on delete cascade,
  kind text not null check (kind in ('legacy', '2025')),
  user_defined_id text,
  name text not null,
  tags text[] not null default '{}',
  production_version_id uuid,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index prompt_user_defined_id_uq on prompt (organization_id, user_defined_id) where user_defined_id is not null;
create index prompt_org_idx on prompt (organization_id, created_at desc);

create table prompt_version (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organization(id) on delete cascade,
  prompt_id uuid not null references prompt(id) on delete cascade,
  major_version integer not null,
  minor_version integer not null,
  model text,
  body jsonb not null,
  metadata jsonb not null default '{}',
  commit_message text,
  parent_prompt_version uuid,
  experiment_id uuid,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (prompt_id, major_version, minor_version)
);
create index prompt_version_prompt_idx on prompt_version (prompt_id);

-- An environment label (production, staging, ...) is unique within a prompt and points at one version.
create table prompt_environment (
  prompt_id uuid not null references prompt(id) on delete cascade,
  environment text not null,
  version_id uuid not null references prompt_version(id) on delete cascade,
  updated_at timestamptz not null default now(),
  primary key (prompt_id, environment)
);

-- One row per proxied request. Columns the REST reads filter on are real columns; bodies are jsonb.
create table request_log (
  id uuid primary key,
  organization_id uuid not null references organization(id) on delete cascade,
  api_key_id uuid,
  created_at timestamptz not null,
  response_created_at timestamptz,
  path text not null,
  target_url text,
  provider text not null,
  request_model text,
  response_model text,
  model_override text,
  user_id text,
  properties jsonb not null default '{}',
  status integer not null,
  streamed boolean not null default false,
  delay_ms double precision,
  time_to_first_token double precision,
  prompt_tokens integer,
  completion_tokens integer,
  total_tokens integer,
  reasoning_tokens integer,
  prompt_cache_read_tokens integer,
  prompt_cache_write_tokens integer,
  prompt_audio_tokens integer,
  completion_audio_tokens integer,
  tokens_source text,
  cost_usd double precision,
  prompt_text text,
  prompt_id uuid,
  prompt_version_id uuid,
  prompt_version text,
  prompt_environment text,
  prompt_inputs jsonb,
  request_body jsonb,
  response_body jsonb,
  error jsonb,
  extra jsonb not null default '{}',
  updated_at timestamptz not null default now()
);
create index request_log_org_created_idx on request_log (organization_id, created_at desc);
create index request_log_created_idx on request_log (created_at);
create index request_log_org_model_idx on request_log (organization_id, request_model);
create index request_log_org_user_idx on request_log (organization_id, user_id);
create index request_log_prompt_version_idx on request_log (prompt_version_id) where prompt_version_id is not null;

create table request_score (
  request_id uuid not null references request_log(id) on delete cascade,
  organization_id uuid not null references organization(id) on delete cascade,
  name text not null,
  value double precision not null,
  created_at timestamptz not null default now(),
  primary key (request_id, name)
);

create table dataset (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organization(id) on delete cascade,
  name text not null,
  created_at timestamptz not null default now()
);
create index dataset_org_idx on dataset (organization_id);

create table dataset_row (
  dataset_id uuid not null references dataset(id) on delete cascade,
  request_id uuid not null references request_log(id) on delete cascade,
  organization_id uuid not null references organization(id) on delete cascade,
  position integer not null,
  created_at timestamptz not null default now(),
  primary key (dataset_id, request_id)
);
create index dataset_row_request_idx on dataset_row (request_id);
