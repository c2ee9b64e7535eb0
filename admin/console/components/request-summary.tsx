/**
 * The facts of one request beside its conversation: timing, tokens and cost, the response cache,
 * the user's feedback, the provider attempts, the token-limit outcome, scores, properties, and the
 * managed prompt with its inputs.
 */
import type { RequestInputs, SvcRequest } from '../api.ts';
import { formatCost, formatInt, formatMs, orDash, prettyJson } from '../format.ts';
import { answeredModel, providerName, requestedModel } from '../request-names.ts';
import { routeHash } from '../router.ts';
import { FeedbackControl, type FeedbackPatch } from './feedback-control.tsx';

/** The property a hit carries: what its answer would have cost at the provider (USD). */
const COST_SAVED = 'svc-cache-cost-saved';

function Facts({ rows }: { rows: Array<[string, string]> }) {
  return (
    <dl className="facts">
      {rows.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

/** `svc-attempts`: every provider attempt (the last one answered); [] when absent or unreadable. */
function attemptsOf(p: Record<string, string>): Array<Record<string, unknown>> {
  try {
    const a = JSON.parse(p['svc-attempts'] ?? '[]') as unknown;
    return Array.isArray(a) ? (a as Array<Record<string, unknown>>) : [];
  } catch {
    return [];
  }
}

/** An attempt's value as text: fractional milliseconds to one decimal, objects as JSON. */
function cell(v: unknown): string {
  if (typeof v === 'number' && !Number.isInteger(v)) return v.toFixed(1);
  if (v !== null && typeof v === 'object') return JSON.stringify(v);
  return orDash(v as string | number | null | undefined);
}

function Attempts({ attempts }: { attempts: Array<Record<string, unknown>> }) {
  if (attempts.length === 0) return null;
  const keys = [...new Set(attempts.flatMap((a) => Object.keys(a)))];
  return (
    <section>
      <h3>Attempts</h3>
      <table className="mini">
        <thead>
          <tr>
            {keys.map((k) => (
              <th key={k}>{k}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {attempts.map((a, i) => (
            <tr key={i}>
              {keys.map((k) => (
                <td key={k}>{cell(a[k])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** The response cache's part in a request sent with `Svc-Cache-Enabled: true`: a hit (whose answer, what it saved) or a miss. */
function CacheFacts({ request: r }: { request: SvcRequest }) {
  if (!r.cache_enabled && !r.cache_reference_id) return null;
  const saved = r.properties?.[COST_SAVED];
  return (
    <section data-testid="cache-facts">
      <h3>Response cache</h3>
      {r.cache_reference_id ? (
        <dl className="facts">
          <div>
            <dt>Result</dt>
            <dd title="Answered from the cache without calling the provider">hit</dd>
          </div>
          <div>
            <dt>Answer of</dt>
            <dd>
              <a href={routeHash('requests', r.cache_reference_id)} data-testid="cache-reference">
                <code>{r.cache_reference_id}</code>
              </a>
            </dd>
          </div>
          <div>
            <dt>Saved</dt>
            <dd>{formatCost(saved !== undefined ? Number(saved) : null)}</dd>
          </div>
        </dl>
      ) : (
        <Facts rows={[['Result', 'miss']]} />
      )}
    </section>
  );
}

/** Props: the request, its managed-prompt inputs (null when none), and `onRated` (see {@link FeedbackControl}). */
export function RequestSummary({ request: r, inputs, onRated }: { request: SvcRequest; inputs: RequestInputs | null; onRated?: (id: string, patch: FeedbackPatch) => void }) {
  const p = r.properties ?? {};
  const tokenLimit = Object.entries(p).filter(([k]) => k.startsWith('svc-token-limit-'));
  const own = Object.entries(p).filter(([k]) => !k.startsWith('svc-'));
  const gateway = Object.entries(p).filter(([k]) => k.startsWith('svc-') && k !== 'svc-attempts' && k !== COST_SAVED && !k.startsWith('svc-token-limit-'));
  const scores = Object.entries(r.scores ?? {});
  const answered = answeredModel(r);
  return (
    <div className="summary">
      <Facts
        rows={[
          ['Status', String(r.response_status)],
          ['Latency', formatMs(r.delay_ms)],
          ['Time to first token', formatMs(r.time_to_first_token)],
          ['Provider', orDash(providerName(r.provider))],
          ['Model', orDash(requestedModel(r))],
          ...(answered ? [['Answered by', answered] as [string, string]] : []),
          ['Tokens in / out', `${formatInt(r.prompt_tokens)} / ${formatInt(r.completion_tokens)}`],
          ['Cache read / write', `${formatInt(r.prompt_cache_read_tokens)} / ${formatInt(r.prompt_cache_write_tokens)}`],
          ['Reasoning tokens', formatInt(r.reasoning_tokens)],
          ['Cost', formatCost(r.cost)],
          ['User', orDash(r.request_user_id)],
          ['Path', orDash(r.request_path)],
          ['Created', new Date(r.request_created_at).toLocaleString()],
        ]}
      />
      <CacheFacts request={r} />
      <FeedbackControl key={`${r.request_id} ${r.feedback_created_at ?? ''}`} request={r} onRated={onRated} />
      <Attempts attempts={attemptsOf(p)} />
      {tokenLimit.length > 0 && (
        <section>
          <h3>Token limit</h3>
          <Facts rows={tokenLimit.map(([k, v]) => [k.replace('svc-token-limit-', ''), v])} />
        </section>
      )}
      {scores.length > 0 && (
        <section>
          <h3>Scores</h3>
          <Facts rows={scores.map(([k, v]) => [k, String(v)])} />
        </section>
      )}
      {own.length > 0 && (
        <section>
          <h3>Properties</h3>
          <Facts rows={own} />
        </section>
      )}
      {gateway.length > 0 && (
        <section>
          <h3>Gateway</h3>
          <Facts rows={gateway.map(([k, v]) => [k.replace(/^svc-/, ''), v])} />
        </section>
      )}
      {(r.prompt_id || inputs) && (
        <section>
          <h3>Managed prompt</h3>
          <Facts
            rows={[
              ['Prompt', orDash(inputs?.prompt_id ?? r.prompt_id)],
              ['Version', orDash(inputs?.version_id ?? r.prompt_version)],
              ['Environment', orDash(inputs?.environment)],
            ]}
          />
          {inputs && <pre className="inputs">{prettyJson(inputs.inputs)}</pre>}
        </section>
      )}
    </div>
  );
}
