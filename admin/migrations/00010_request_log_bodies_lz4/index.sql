-- Log ingestion cost (issue 19): request_log's large text columns are compressed with LZ4 where the
-- server has it.
--
-- A row over ~2 KB has its largest values compressed before they go out of line (TOAST). The default,
-- pglz, is the dearest step of storing a coding agent's request: bench/ingest.ts --request=claude-code
-- (Claude Code's recorded ~49 KB request) measured ~1 ms of PostgreSQL CPU per row more with pglz
-- than with lz4, for about the same size on disk. Only values written from now on are
-- compressed with lz4; older ones stay pglz and read as before (no rewrite, so this is instant).
--
-- PostgreSQL builds without lz4 (the embedded server of `npm start` is one) keep pglz: the column
-- option would be refused there. Written to run again harmlessly.
do $$
begin
  if exists (select 1 from pg_settings where name = 'default_toast_compression' and 'lz4' = any(enumvals)) then
    alter table request_log
      alter column request_body set compression lz4,
      alter column response_body set compression lz4,
      alter column prompt_text set compression lz4;
  end if;
end
$$;
