-- request_log.request_model held the model as the client wrote it, `openai/gpt-4o-mini` on /ai and
-- /v1, while records show it, and `request.model` filters must match it, without the provider
-- prefix (the provider is a column of its own). New rows are stored without it (admin/ingest.ts,
-- modelWithoutProvider); this strips it from the rows stored before. Only a known provider's name
-- is a prefix, and only the first: `openrouter/openai/gpt-4o` becomes `openai/gpt-4o`.
update request_log
set request_model = substr(request_model, strpos(request_model, '/') + 1)
where strpos(request_model, '/') > 1
  and split_part(request_model, '/', 1) in (
    'openai', 'groq', 'mistral', 'deepseek', 'xai', 'together', 'fireworks',
    'openrouter', 'ollama', 'gemini', 'anthropic', 'bedrock', 'azure'
  );
