/**
 * One request, opened from the table: the conversation (or the raw request / response JSON) and
 * its facts. Esc closes it.
 */
import { useState } from 'react';
import type { RequestInputs, SvcRequest } from '../api.ts';
import { useKeydown, useLoad } from '../hooks.ts';
import { isTyping } from '../router.ts';
import { useSession } from '../session.tsx';
import { AddToDataset } from './add-to-dataset.tsx';
import { Conversation } from './conversation.tsx';
import { JsonView } from './json-view.tsx';
import type { FeedbackPatch } from './feedback-control.tsx';
import { RequestSummary } from './request-summary.tsx';

type Tab = 'conversation' | 'request' | 'response';

async function loadBoth(api: ReturnType<typeof useSession>['api'], id: string): Promise<{ request: SvcRequest; inputs: RequestInputs | null }> {
  const [request, inputs] = await Promise.all([api.getRequest(id), api.getRequestInputs(id).catch(() => null)]);
  return { request, inputs };
}

/** Props: the request id, the close handler, and `onRated` told of a rating given here. */
export function RequestDetail({ id, onClose, onRated }: { id: string; onClose: () => void; onRated?: (id: string, patch: FeedbackPatch) => void }) {
  const { api } = useSession();
  const [tab, setTab] = useState<Tab>('conversation');
  const { data, loading } = useLoad(() => loadBoth(api, id), [api, id]);
  useKeydown((e) => {
    if (e.key === 'Escape' && !isTyping(e)) onClose();
  });
  const shown = data && data.request.request_id === id ? data : undefined;

  const tabButton = (t: Tab, label: string, testid: string) => (
    <button type="button" role="tab" aria-selected={tab === t} className={tab === t ? 'tab active' : 'tab'} data-testid={testid} onClick={() => setTab(t)}>
      {label}
    </button>
  );

  return (
    <aside className="detail" data-testid="request-detail" aria-label="Request">
      <header className="detail-head">
        <code className="muted">{id}</code>
        <div className="tabs" role="tablist">
          {tabButton('conversation', 'Conversation', 'tab-conversation')}
          {tabButton('request', 'Request JSON', 'tab-request-json')}
          {tabButton('response', 'Response JSON', 'tab-response-json')}
        </div>
        <div className="spacer" />
        <button type="button" className="ghost" data-testid="detail-close" title="Close (Esc)" onClick={onClose}>
          ×
        </button>
      </header>
      <AddToDataset requestId={id} />
      {!shown && loading && <p className="muted pad">Loading…</p>}
      {shown && (
        <div className="detail-body">
          <div className="detail-main">
            {tab === 'conversation' && <Conversation request={shown.request} />}
            {tab === 'request' && <JsonView value={shown.request.request_body} />}
            {tab === 'response' && <JsonView value={shown.request.response_body} />}
          </div>
          <RequestSummary request={shown.request} inputs={shown.inputs} onRated={onRated} />
        </div>
      )}
    </aside>
  );
}
