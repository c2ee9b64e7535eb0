/**
 * A logged request's conversation, top to bottom as a person reads it: the request's messages
 * (system, user, assistant turns, tool results), then the response's, then the error if the
 * request failed. Tool results that Anthropic's Messages carries inside a user turn are drawn as
 * tool messages of their own, as the other dialects log them.
 */
import type { SchemaMessage, SvcRequest } from '../api.ts';
import { prettyJson } from '../format.ts';
import { MessageView } from './message-view.tsx';

/** Splits a message's tool results out into messages of their own, keeping the order. */
export function splitToolResults(messages: SchemaMessage[]): SchemaMessage[] {
  const out: SchemaMessage[] = [];
  for (const m of messages) {
    const parts = m.contentArray;
    if (!parts || !parts.some((p) => p._type === 'function')) {
      out.push(m);
      continue;
    }
    let rest: SchemaMessage[] = [];
    const flush = () => {
      if (rest.length > 0) out.push({ ...m, _type: 'contentArray', contentArray: rest, tool_calls: undefined });
      rest = [];
    };
    for (const p of parts) {
      if (p._type === 'function') {
        flush();
        out.push({ ...p, role: 'tool' });
      } else rest.push(p);
    }
    flush();
  }
  return out;
}

/** Renders the conversation of `request` from its `llmSchema`. */
export function Conversation({ request }: { request: SvcRequest }) {
  const schema = request.llmSchema;
  if (!schema) return <p className="muted">This request has no conversation to show (its body is not a chat); see the raw JSON.</p>;
  const asked = splitToolResults(schema.request?.messages ?? []);
  const answered = splitToolResults(schema.response?.messages ?? []);
  const error = schema.response?.error?.svcMessage;
  return (
    <div className="conversation">
      {schema.request?.tools && schema.request.tools.length > 0 && (
        <details className="tools-offered">
          <summary>{schema.request.tools.length} tools offered</summary>
          <ul>
            {schema.request.tools.map((t, i) => (
              <li key={i}>
                <code>{t.name}</code> <span className="muted">{t.description}</span>
              </li>
            ))}
          </ul>
        </details>
      )}
      {asked.map((m, i) => (
        <MessageView key={`q${i}`} message={m} />
      ))}
      {answered.length > 0 && <div className="divider">response · {schema.response?.model ?? request.response_model ?? ''}</div>}
      {answered.map((m, i) => (
        <MessageView key={`a${i}`} message={m} />
      ))}
      {error !== undefined && error !== null && (
        <div className="response-error">
          <div className="tool-head">
            <span className="status err">error {request.response_status}</span>
          </div>
          <pre>{prettyJson(error)}</pre>
        </div>
      )}
    </div>
  );
}
