/** A prompt's versions, newest first: major.minor, environment labels, commit message, date. */
import type { PromptVersion } from '../api.ts';
import { formatTime } from '../format.ts';

/** `major.minor` of a version. */
export function versionLabel(v: PromptVersion): string {
  return `${v.major_version}.${v.minor_version}`;
}

/** Props: the versions, the selected one, and the select handler. */
export function VersionList({ versions, selectedId, onSelect }: { versions: PromptVersion[]; selectedId: string | null; onSelect: (id: string) => void }) {
  return (
    <table className="grid">
      <thead>
        <tr>
          <th>Version</th>
          <th>Environments</th>
          <th>Commit message</th>
          <th>Model</th>
          <th>Created</th>
        </tr>
      </thead>
      <tbody>
        {versions.map((v) => (
          <tr
            key={v.id}
            data-testid="prompt-version"
            data-version={versionLabel(v)}
            className={v.id === selectedId ? 'selected clickable' : 'clickable'}
            onClick={() => onSelect(v.id)}
          >
            <td>
              <code>{versionLabel(v)}</code>
            </td>
            <td>
              {v.environments.map((e) => (
                <span key={e} className={`badge env-${e}`}>
                  {e}
                </span>
              ))}
            </td>
            <td>{v.commit_message}</td>
            <td className="muted">{v.model}</td>
            <td className="muted">{formatTime(v.created_at)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
