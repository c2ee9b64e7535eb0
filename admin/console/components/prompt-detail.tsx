/**
 * One prompt: its versions, the selected version's body in the editor (saving makes a new
 * version from it), promotion of the selected version to an environment, and the diff between any
 * two versions.
 */
import { useEffect, useMemo, useState } from 'react';
import type { PromptVersion } from '../api.ts';
import { prettyJson } from '../format.ts';
import { useLoad } from '../hooks.ts';
import { useSession } from '../session.tsx';
import { PromoteForm } from './promote-form.tsx';
import { PromptDiff } from './prompt-diff.tsx';
import { PromptEditor, type PromptDraft } from './prompt-editor.tsx';
import { VersionList, versionLabel } from './version-list.tsx';

/** Newest first: by major, then minor. */
function byVersionDesc(a: PromptVersion, b: PromptVersion): number {
  return b.major_version - a.major_version || b.minor_version - a.minor_version;
}

/** Bodies by version id, fetched once each. */
function useBodies(ids: Array<string | null>): Record<string, unknown> {
  const { api, reportError } = useSession();
  const [bodies, setBodies] = useState<Record<string, unknown>>({});
  useEffect(() => {
    for (const id of ids) {
      if (!id || id in bodies) continue;
      api.promptBody(id).then((b) => setBodies((m) => ({ ...m, [id]: b })), reportError);
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [ids.join(','), api]);
  return bodies;
}

/** A select of versions; option values are `major.minor` labels (unique within a prompt), so tests and people pick by what they see. */
function VersionSelect({ versions, value, onChange, testid }: { versions: PromptVersion[]; value: string; onChange: (id: string) => void; testid: string }) {
  const current = versions.find((v) => v.id === value);
  return (
    <select
      data-testid={testid}
      value={current ? versionLabel(current) : ''}
      onChange={(e) => onChange(versions.find((v) => versionLabel(v) === e.target.value)?.id ?? '')}
    >
      {versions.map((v) => (
        <option key={v.id} value={versionLabel(v)}>
          {versionLabel(v)}
        </option>
      ))}
    </select>
  );
}

/** Props: the prompt's id and name. */
export function PromptDetail({ promptId, name }: { promptId: string; name: string }) {
  const { api, reportError } = useSession();
  const { data, reload } = useLoad(() => api.listVersions(promptId), [api, promptId]);
  const versions = useMemo(() => [...(data ?? [])].sort(byVersionDesc), [data]);
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const [diffFrom, setDiffFrom] = useState('');
  const [diffTo, setDiffTo] = useState('');
  const selected = versions.find((v) => v.id === selectedId) ?? versions[0] ?? null;
  const from = diffFrom || versions[1]?.id || versions[0]?.id || '';
  const to = diffTo || versions[0]?.id || '';
  const bodies = useBodies([selected?.id ?? null, from || null, to || null]);

  useEffect(() => {
    setSelectedId(null);
    setDiffFrom('');
    setDiffTo('');
  }, [promptId]);

  const saveVersion = async (d: PromptDraft): Promise<boolean> => {
    if (!selected) return false;
    try {
      const created = await api.updatePrompt({ promptId, promptVersionId: selected.id, newMajorVersion: d.newMajor, commitMessage: d.commitMessage, promptBody: d.body });
      setSelectedId(created.id);
      reload();
      return true;
    } catch (err) {
      reportError(err);
      return false;
    }
  };

  const promote = async (environment: string) => {
    if (!selected) return;
    try {
      await api.promoteVersion(promptId, selected.id, environment);
      reload();
    } catch (err) {
      reportError(err);
    }
  };

  const selectedBody = selected ? bodies[selected.id] : undefined;
  const label = (id: string) => versionLabel(versions.find((v) => v.id === id) ?? versions[0]!);
  return (
    <div className="prompt-detail">
      <h2>{name}</h2>
      <VersionList versions={versions} selectedId={selected?.id ?? null} onSelect={setSelectedId} />
      {selected && (
        <section>
          <h3>Version {versionLabel(selected)}</h3>
          <PromoteForm versionLabel={versionLabel(selected)} onPromote={promote} />
          {selectedBody !== undefined && <PromptEditor key={selected.id} mode="version" initialBody={prettyJson(selectedBody)} onSave={saveVersion} />}
        </section>
      )}
      {versions.length > 0 && (
        <section>
          <h3>Diff</h3>
          <div className="row">
            <VersionSelect testid="diff-from" versions={versions} value={from} onChange={setDiffFrom} />
            <span className="muted">→</span>
            <VersionSelect testid="diff-to" versions={versions} value={to} onChange={setDiffTo} />
          </div>
          {from in bodies && to in bodies && <PromptDiff from={bodies[from]} to={bodies[to]} fromLabel={label(from)} toLabel={label(to)} />}
        </section>
      )}
    </div>
  );
}
