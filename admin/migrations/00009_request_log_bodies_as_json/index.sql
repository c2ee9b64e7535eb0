-- Log ingestion cost (issue 19): request_log's two bodies are stored as json, not jsonb.
--
-- jsonb builds a binary tree of every body on every insert; json only checks the text is JSON
-- and keeps it as it is. No query reads inside a body (REST reads, datasets and the console return
-- bodies whole; postgres.js parses json and jsonb alike), so the tree bought nothing but its cost,
-- and json keeps a body as the client sent it and the provider answered (member order, duplicates
-- and number spellings included), which is what the log promises; only the `\u0000` and lone
-- surrogate escapes are still replaced (admin/jsonb-text.ts), as ->> could not read them into text.
-- The ->/->> operators work on json too.
--
-- The other jsonb columns (properties, which filters read; prompt_inputs, error, extra) are small;
-- they stay jsonb. The type change rewrites request_log once (on a log of millions of rows, run it in a
-- quiet hour). Written to run again harmlessly (tests re-run the migrations after an earlier one).
do $$
begin
  if (select data_type from information_schema.columns
      where table_schema = current_schema() and table_name = 'request_log' and column_name = 'request_body') = 'jsonb' then
    alter table request_log
      alter column request_body type json using request_body::json,
      alter column response_body type json using response_body::json;
  end if;
end
$$;
