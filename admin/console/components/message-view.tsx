/**
 * One message of a conversation (the dialect-neutral `llmSchema` message of every dialect the
 * gateway logs): its role, reasoning (folded), text as markdown, images, files, tool calls with
 * their arguments, and tool results.
 */
import { useState } from 'react';
import type { SchemaMessage } from '../api.ts';
import { prettyJson } from '../format.ts';
import { Markdown } from './markdown.tsx';

/** The `data-role` of a message: system | user | assistant | tool. */
export function displayRole(m: SchemaMessage): 'system' | 'user' | 'assistant' | 'tool' {
  if (m._type === 'function') return 'tool';
  switch (m.role) {
    case 'system':
    case 'developer':
      return 'system';
    case 'assistant':
    case 'model':
      return 'assistant';
    case 'tool':
    case 'function':
      return 'tool';
    default:
      return 'user';
  }
}

function ToolCall({ call }: { call: { id?: string; name?: string; arguments?: unknown } }) {
  return (
    <div className="tool-call">
      <div className="tool-head">
        <span className="badge">call</span> <code>{call.name ?? '?'}</code> {call.id && <span className="muted">{call.id}</span>}
      </div>
      <pre>{prettyJson(call.arguments ?? {})}</pre>
    </div>
  );
}

function ToolResult({ part }: { part: SchemaMessage }) {
  const text = part.content ?? '';
  const looksJson = /^\s*[[{]/.test(text);
  return (
    <div className={`tool-result ${part.is_error ? 'error' : ''}`}>
      <div className="tool-head">
        <span className="badge">result</span> {part.tool_call_id && <span className="muted">{part.tool_call_id}</span>}
        {part.is_error && <span className="status err"> error</span>}
      </div>
      {looksJson ? <pre>{prettyJson(text)}</pre> : <Markdown text={text} />}
    </div>
  );
}

/**
 * An image of a message. Inline (`data:`) images show at once; an image on another site loads only
 * when asked (opening a log must not tell that site who reads it). One that cannot be shown says so.
 */
function ImagePart({ url }: { url: string | undefined }) {
  const [failed, setFailed] = useState(false);
  const [asked, setAsked] = useState(false);
  if (!url || failed) return <span className="badge">image (not shown)</span>;
  if (!url.startsWith('data:') && !asked) {
    return (
      <span className="remote-image">
        <span className="badge">image</span> <code>{url.length > 120 ? `${url.slice(0, 120)}…` : url}</code>{' '}
        <button type="button" className="ghost" onClick={() => setAsked(true)}>
          Load
        </button>
      </span>
    );
  }
  return <img className="msg-image" src={url} alt="image in the message" onError={() => setFailed(true)} />;
}

/** One part of a message: text, reasoning, image, file, tool call or tool result. */
function Part({ part }: { part: SchemaMessage }) {
  switch (part._type) {
    case 'image':
      return <ImagePart url={part.image_url} />;
    case 'file':
      return <span className="badge">file {part.filename ?? part.mime_type ?? ''}</span>;
    case 'function':
      return <ToolResult part={part} />;
    case 'functionCall':
      return <>{(part.tool_calls ?? []).map((c, i) => <ToolCall key={i} call={c} />)}</>;
    default:
      return (
        <>
          {part.reasoning && (
            <details className="reasoning">
              <summary>Reasoning</summary>
              <Markdown text={part.reasoning} />
            </details>
          )}
          {part.content ? <Markdown text={part.content} /> : null}
        </>
      );
  }
}

/**
 * The parts to draw, in order. Messages and Responses list tool calls among their parts; a chat
 * message lists them apart (`tool_calls`), so they are drawn after its text.
 */
function messageParts(message: SchemaMessage): SchemaMessage[] {
  const calls = message.tool_calls ?? [];
  if (message.contentArray) {
    const hasCalls = message.contentArray.some((p) => p._type === 'functionCall');
    return hasCalls || calls.length === 0 ? message.contentArray : [...message.contentArray, { _type: 'functionCall', tool_calls: calls }];
  }
  // A chat `tool` message is a tool result: drawn as one (its call id, JSON pretty-printed).
  if (calls.length === 0) return displayRole(message) === 'tool' ? [{ ...message, _type: 'function' }] : [message];
  return [{ _type: 'message', content: message.content, reasoning: message.reasoning }, { _type: 'functionCall', tool_calls: calls }];
}

/** Renders one message in the `message` element with its `data-role`. */
export function MessageView({ message }: { message: SchemaMessage }) {
  const role = displayRole(message);
  const parts = messageParts(message);
  return (
    <div className={`message role-${role}`} data-testid="message" data-role={role}>
      <div className="message-role">
        {role}
        {message.name ? ` · ${message.name}` : ''}
      </div>
      <div className="message-body">
        {parts.map((p, i) => (
          <Part key={i} part={p} />
        ))}
      </div>
    </div>
  );
}
