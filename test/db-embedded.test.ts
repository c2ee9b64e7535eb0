/**
 * admin/db.ts: under root the embedded PostgreSQL runs as the `postgres` user, so admin checks up
 * front that other users can enter every directory on the way to the binaries and the data; and
 * how many hosts a URL names (a multi-host URL keeps postgres.js's own sockets and failover).
 */
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { assertReachableByOthers, hostCount } from '../admin/db.ts';

let root: string;
before(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'svc-db-'));
  await chmod(root, 0o755);
  await mkdir(path.join(root, 'open', 'data'), { recursive: true });
  await mkdir(path.join(root, 'private', 'repo', 'data'), { recursive: true });
  await chmod(path.join(root, 'private'), 0o700);
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

test('directories every user can enter pass', async () => {
  await assertReachableByOthers([path.join(root, 'open', 'data')]);
});

test('a directory others cannot enter is named, with its mode and the ways out', async () => {
  const target = path.join(root, 'private', 'repo', 'data');
  await assert.rejects(assertReachableByOthers([path.join(root, 'open', 'data'), target]), (err: Error) => {
    assert.match(err.message, new RegExp(`cannot enter ${path.join(root, 'private').replace(/[/.]/g, '\\$&')} \\(mode 700\\), on the way to ${target.replace(/[/.]/g, '\\$&')}`));
    assert.match(err.message, /chmod o\+x/);
    assert.match(err.message, /DATABASE_URL/);
    return true;
  });
});

test('hostCount: one host, several, credentials with commas or at-signs before them', () => {
  assert.equal(hostCount('postgres://postgres@127.0.0.1:5432/test'), 1);
  assert.equal(hostCount('postgres://u:p@h1:5432,h2:5433/db?target_session_attrs=read-write'), 2);
  assert.equal(hostCount('postgres://u:a,b@c@h1/db'), 1);
  assert.equal(hostCount('postgresql://localhost'), 1);
});
