/**
 * Coding-agent CLIs for end-to-end tests (Claude Code, Codex): a pinned version installed on first
 * use into the git-ignored `.cache/agent-clis/<package>@<version>/` at the repository root, reused
 * afterwards, and run as a child process with an environment the test gives in full.
 *
 * The CLIs are not dependencies of the package (together about 760 MB installed), so `npm ci`
 * stays lean for people who only run the gateway. The install is
 * `npm install --prefix <staging> --no-save --no-audit --no-fund <package>@<version>` into a
 * staging folder, checked (`<bin> --version` must name the version), then renamed into place, so a
 * broken or half-finished install is never reused. A lock folder keeps two test processes from
 * installing the same CLI at once. An install that cannot happen fails the test with the package,
 * version and npm's output: never a skip.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Where installed CLIs are kept (git-ignored through `.cache/`). */
export const AGENT_CLI_CACHE = path.join(ROOT, '.cache', 'agent-clis');

/** A pinned CLI: its npm package, version and the name of the bin to run. */
export interface AgentCliSpec {
  /** npm package name, e.g. `@anthropic-ai/claude-code`. */
  pkg: string;
  /** Exact version (the one whose captured request is in test/fixtures/clients/). */
  version: string;
  /** The package's bin name (`claude`, `codex`). */
  bin: string;
}

/** Claude Code 2.1.328: the version test/fixtures/clients/claude-code-2.1.328.* were captured from. */
export const CLAUDE_CODE: AgentCliSpec = { pkg: '@anthropic-ai/claude-code', version: '2.1.328', bin: 'claude' };
/** Codex CLI 0.169.0: the version test/fixtures/clients/codex-0.169.0.* were captured from. */
export const CODEX: AgentCliSpec = { pkg: '@openai/codex', version: '0.169.0', bin: 'codex' };

/** An installed CLI: the path of its bin, and how its install went this time. */
export interface InstalledCli {
  spec: AgentCliSpec;
  /** Absolute path of the bin (`<cache>/node_modules/.bin/<bin>`). */
  binPath: string;
  /** True when this call installed it; false when it was in the cache already. */
  installed: boolean;
  /** Time this call spent installing or waiting for another process's install (ms). */
  ms: number;
}

/** What a CLI run printed, how it ended, and how long it took. */
export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Wall time of the run (ms). */
  ms: number;
}

const LOCK_STALE_MS = 15 * 60_000;
const INSTALL_TIMEOUT_MS = 10 * 60_000;

/** The cache folder of one pinned CLI (`@scope/name` → `@scope+name`, so one folder level). */
function folderOf(spec: AgentCliSpec): string {
  return path.join(AGENT_CLI_CACHE, `${spec.pkg.replace('/', '+')}@${spec.version}`);
}

/** Runs a command to its end, collecting its output. Never rejects on a non-zero exit. */
function runCommand(cmd: string, args: string[], o: { env: NodeJS.ProcessEnv; cwd: string; timeoutMs: number }): Promise<CliRun> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: o.cwd, env: o.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      stderr += `\n[agent-cli] killed after ${o.timeoutMs} ms`;
      child.kill('SIGKILL');
    }, o.timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: performance.now() - t0 });
    });
  });
}

/**
 * Takes the install lock (a `mkdir`, atomic, holding the holder's pid); false when another process
 * holds it. A lock whose holder is gone (killed mid-install) or older than any install is removed,
 * so the next try takes it.
 */
function tryLock(lock: string): boolean {
  try {
    mkdirSync(lock);
    writeFileSync(path.join(lock, 'pid'), String(process.pid));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  let age = 0;
  try {
    age = Date.now() - statSync(lock).mtimeMs;
  } catch {
    return false; // removed meanwhile: the next try may take it
  }
  let alive: boolean;
  try {
    process.kill(Number(readFileSync(path.join(lock, 'pid'), 'utf8')), 0);
    alive = true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // No pid yet (the holder is between its mkdir and its write) counts as alive for a few seconds.
    alive = code === 'ESRCH' ? false : code === 'EPERM' ? true : age < 10_000;
  }
  if (!alive || age > LOCK_STALE_MS) rmSync(lock, { recursive: true, force: true });
  return false;
}

/** Checks an installed bin answers `--version` with the pinned version. @throws naming the package when not. */
async function verify(spec: AgentCliSpec, binPath: string): Promise<void> {
  if (!existsSync(binPath)) throw new Error(`${spec.pkg}@${spec.version}: npm finished but ${binPath} does not exist`);
  const home = mkdtempSync(path.join(tmpdir(), 'agent-cli-home-'));
  let r: CliRun;
  try {
    r = await runCommand(binPath, ['--version'], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home }, cwd: home, timeoutMs: 60_000 });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  if (r.code !== 0 || !r.stdout.includes(spec.version)) {
    throw new Error(
      `${spec.pkg}@${spec.version}: the installed ${spec.bin} did not report its version (exit ${r.code}${r.signal ? `, ${r.signal}` : ''}); ` +
        `its install script may not have run (the platform binary is copied by postinstall).\nstdout: ${r.stdout.slice(0, 2000)}\nstderr: ${r.stderr.slice(0, 2000)}`,
    );
  }
}

/** Installs `spec` into a staging folder, verifies it and moves it to `folder`. @throws with npm's output. */
async function install(spec: AgentCliSpec, folder: string): Promise<void> {
  const staging = `${folder}.staging-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  // Install scripts of the CLI itself are allowed by name: its postinstall puts the native binary in place.
  writeFileSync(path.join(staging, 'package.json'), JSON.stringify({ name: 'agent-cli-cache', private: true, allowScripts: { [spec.pkg]: true } }, null, 2) + '\n');
  const args = ['install', '--prefix', staging, '--no-save', '--no-audit', '--no-fund', `${spec.pkg}@${spec.version}`];
  let r: CliRun;
  try {
    r = await runCommand('npm', args, { env: process.env, cwd: staging, timeoutMs: INSTALL_TIMEOUT_MS });
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(`cannot install ${spec.pkg}@${spec.version} for the end-to-end tests: npm could not be started: ${(err as Error).message}`);
  }
  if (r.code !== 0) {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(`cannot install ${spec.pkg}@${spec.version} for the end-to-end tests: \`npm ${args.join(' ')}\` exited ${r.code ?? r.signal}:\n${(r.stderr || r.stdout).slice(-4000)}`);
  }
  try {
    await verify(spec, path.join(staging, 'node_modules', '.bin', spec.bin));
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    throw err;
  }
  renameSync(staging, folder);
}

/**
 * The pinned CLI, installed on first use (see the module comment) and reused from the cache after.
 * Waits while another process installs the same CLI.
 * @throws an Error naming the package, the version and npm's error when it cannot be installed.
 */
export async function ensureAgentCli(spec: AgentCliSpec): Promise<InstalledCli> {
  const folder = folderOf(spec);
  const binPath = path.join(folder, 'node_modules', '.bin', spec.bin);
  const t0 = performance.now();
  mkdirSync(AGENT_CLI_CACHE, { recursive: true });
  const lock = `${folder}.lock`;
  for (;;) {
    if (existsSync(binPath)) return { spec, binPath, installed: false, ms: performance.now() - t0 };
    if (tryLock(lock)) break;
    if (performance.now() - t0 > INSTALL_TIMEOUT_MS) throw new Error(`cannot install ${spec.pkg}@${spec.version}: another process has held ${lock} for ${INSTALL_TIMEOUT_MS} ms`);
    await new Promise((r) => setTimeout(r, 500));
  }
  try {
    if (existsSync(binPath)) return { spec, binPath, installed: false, ms: performance.now() - t0 };
    await install(spec, folder);
    return { spec, binPath, installed: true, ms: performance.now() - t0 };
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * Runs an installed CLI with exactly `env` (plus `PATH`, so it finds a shell and its tools): nothing
 * else of the test process's environment reaches it (no ANTHROPIC_* or OPENAI_* variable of the
 * machine). stdin is closed (/dev/null), as in a script.
 * @param timeoutMs the run is killed (SIGKILL) after this long (ms; default 120,000).
 */
export function runAgentCli(cli: InstalledCli, args: string[], o: { env: Record<string, string>; cwd: string; timeoutMs?: number }): Promise<CliRun> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', TERM: 'dumb', ...o.env };
  return runCommand(cli.binPath, args, { env, cwd: o.cwd, timeoutMs: o.timeoutMs ?? 120_000 });
}
