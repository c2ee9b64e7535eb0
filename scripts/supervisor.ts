/**
 * One child process of `npm start` (admin or the proxy): forked in its own process group (so a
 * terminal's Ctrl-C reaches start.ts alone, which orders the stop) with an IPC channel and
 * `SVC_SUPERVISED=1` (shared/supervised.ts: the child then leaves stopping to start.ts, and stops by
 * itself if start.ts disappears). A child that exits without being asked is restarted after a
 * backoff (scripts/restart-backoff.ts), each restart logged with the exit code or signal and the
 * delay; one that keeps failing before it is ready, or exits with code 2 (invalid configuration:
 * restarting cannot help), is given up, and start.ts then stops everything. Whatever a dead child
 * left in its process group (the embedded PostgreSQL of a SIGKILLed admin) is stopped before the
 * child is started again, so the new one finds its database port and data directory free.
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';
import { SUPERVISED_ENV, type SupervisionMessage } from '../shared/supervised.ts';
import { DEFAULT_RESTART_POLICY, RestartBackoff, type RestartPolicy } from './restart-backoff.ts';

/** How long leftovers in a dead child's process group get to stop after SIGINT before SIGKILL (ms). */
const LEFTOVER_GRACE_MS = 10_000;

/** What to run and how long to wait for it to stop. */
export interface ChildSpec {
  /** Name in the log lines: `admin`, `proxy`. */
  name: string;
  /** Absolute path of the entry: a `.ts` file runs under tsx, a `.mjs` bundle with plain node. */
  entry: string;
  /** Command-line arguments (e.g. `--config FILE`). */
  args: string[];
  /** Node.js flags before the entry (the proxy's: proxy/node-flags.ts); default none. */
  nodeFlags?: readonly string[];
  /** The `type` of the IPC message the child sends once it serves. */
  readyType: string;
  /** The child's environment, read at every (re)start (the proxy's control-plane key may have changed). */
  env: () => NodeJS.ProcessEnv;
  /** After a stop request, its process group is SIGKILLed if it has not exited within this (ms). */
  stopTimeoutMs: number;
  policy?: RestartPolicy;
}

/** What the child's events mean for `npm start` as a whole. */
export interface SupervisorHooks {
  logger: Logger;
  /** The child is ready; `first` for its first start, false after a restart. */
  onReady(first: boolean): void;
  /** The child received a signal (it was signalled directly, e.g. by systemd): stop everything. */
  onStopRequest(signal: string): void;
  /** The child cannot be kept running: stop everything with code 1. */
  onGiveUp(reason: string): void;
}

/** A supervised child process (see the module docstring). */
export class SupervisedChild {
  private child: ChildProcess | null = null;
  private readyAt: number | null = null;
  private everReady = false;
  private restarts = 0;
  private restartTimer: NodeJS.Timeout | null = null;
  private stopping = false;
  /** Set while a dead child's exit is being handled (its group's leftovers being stopped). */
  private exiting: Promise<void> | null = null;
  private readonly backoff: RestartBackoff;

  constructor(
    private readonly spec: ChildSpec,
    private readonly hooks: SupervisorHooks,
  ) {
    this.backoff = new RestartBackoff(spec.policy ?? DEFAULT_RESTART_POLICY);
  }

  /** Starts the child; {@link SupervisorHooks.onReady} says when it serves. */
  start(): void {
    if (!this.stopping && !this.child) this.spawn();
  }

  /**
   * Stops the child and keeps it stopped: asks it over IPC once it is ready (so it finishes its
   * requests and flushes), with SIGTERM before; SIGKILLs its process group after `stopTimeoutMs`.
   * Resolves when it and whatever it left in its process group have exited. Never rejects.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    const child = this.child;
    if (!child) return void (await this.exiting);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    this.askToStop(child);
    const kill = setTimeout(() => {
      this.hooks.logger.warn({ child: this.spec.name, childPid: child.pid, timeoutMs: this.spec.stopTimeoutMs }, `${this.spec.name} did not stop in time; killing it`);
      signalGroup(child.pid, 'SIGKILL');
    }, this.spec.stopTimeoutMs);
    await exited;
    clearTimeout(kill);
    await this.exiting;
  }

  /**
   * SIGKILLs the child's process group at once (a forced stop), and keeps it stopped.
   * @returns a promise settled when the child process has exited (at once when none runs).
   */
  kill(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    const child = this.child;
    if (!child) return Promise.resolve();
    signalGroup(child.pid, 'SIGKILL');
    if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => child.once('exit', () => resolve()));
  }

  private spawn(): void {
    const execArgv = [...(this.spec.entry.endsWith('.mjs') ? [] : ['--import', 'tsx']), ...(this.spec.nodeFlags ?? [])];
    const child = fork(this.spec.entry, this.spec.args, {
      env: { ...this.spec.env(), [SUPERVISED_ENV]: '1' },
      execArgv,
      detached: true,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child = child;
    this.readyAt = null;
    this.hooks.logger.info({ child: this.spec.name, childPid: child.pid }, `${this.spec.name} started`);
    child.on('message', (m: { type?: string; signal?: string; port?: number } | null) => {
      if (m?.type === this.spec.readyType) {
        this.readyAt = Date.now();
        const first = !this.everReady;
        this.everReady = true;
        this.hooks.logger.info({ child: this.spec.name, childPid: child.pid, port: m.port }, `${this.spec.name} ready`);
        this.hooks.onReady(first);
      } else if (m?.type === 'stop.request') {
        // Asked to stop while its signal was on the way: it waits for the word, so say it again.
        if (this.stopping) this.askToStop(child);
        this.hooks.onStopRequest(m.signal ?? 'a signal');
      }
    });
    let handled = false;
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      if (handled) return;
      handled = true;
      this.exiting = this.exited(child, code, signal);
    };
    child.once('exit', onExit);
    // A fork that failed outright (no pid) may never emit 'exit'.
    child.on('error', (err) => {
      this.hooks.logger.error({ child: this.spec.name, err: err.message }, `${this.spec.name}: process error`);
      if (child.pid === undefined) onExit(null, null);
    });
  }

  /** A ready child is asked over IPC; one still starting (its handlers maybe not yet set) gets SIGTERM. */
  private askToStop(child: ChildProcess): void {
    if (this.readyAt !== null && child.connected) {
      const stop: SupervisionMessage = { type: 'stop' };
      child.send(stop, (err) => {
        if (err) child.kill('SIGTERM');
      });
    } else {
      child.kill('SIGTERM');
    }
  }

  private async exited(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): Promise<void> {
    const readyForMs = this.readyAt === null ? null : Date.now() - this.readyAt;
    this.child = null;
    // After a requested stop, leftovers are only tsx's esbuild service on its way out: not worth a warning.
    await stopLeftovers(child.pid, this.spec.name, this.hooks.logger, this.stopping ? 'debug' : 'warn');
    if (this.stopping) return;
    const name = this.spec.name;
    const how = signal ? `signal ${signal}` : `code ${code}`;
    if (readyForMs === null && code === 2) {
      return this.hooks.onGiveUp(`${name} exited with code 2 (invalid configuration or setup; see its message above)`);
    }
    const delayMs = this.backoff.crashed(readyForMs);
    if (delayMs === null) {
      return this.hooks.onGiveUp(`${name} exited (${how}) before it was ready, ${this.backoff.failedStartsInARow} times in a row`);
    }
    this.restarts++;
    this.hooks.logger.error(
      { child: name, childPid: child.pid, code, signal, readyForMs, restartInMs: delayMs, restarts: this.restarts },
      `${name} exited unexpectedly (${how}); restarting it in ${delayMs / 1000} s`,
    );
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (!this.stopping) this.spawn();
    }, delayMs);
  }
}

/** Sends `signal` to the process group `pgid` (a detached child's pid); false when it is empty. */
function signalGroup(pgid: number | undefined, signal: NodeJS.Signals | 0): boolean {
  if (pgid === undefined) return false;
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    // ESRCH: nothing left; EPERM: only processes start.ts may not signal, which it cannot stop anyway.
    return false;
  }
}

/**
 * Stops what a dead child left in its process group: SIGINT, which is PostgreSQL's fast shutdown
 * (its postmaster aborts open transactions, checkpoints and exits; its other processes take SIGINT
 * as a query cancel) and ends any node process; SIGKILL after {@link LEFTOVER_GRACE_MS}.
 */
async function stopLeftovers(pgid: number | undefined, name: string, logger: Logger, level: 'debug' | 'warn'): Promise<void> {
  if (!signalGroup(pgid, 0)) return;
  logger[level]({ child: name, pgid }, `${name} left processes in its process group (its embedded PostgreSQL, tsx's esbuild service); stopping them`);
  signalGroup(pgid, 'SIGINT');
  const deadline = Date.now() + LEFTOVER_GRACE_MS;
  while (signalGroup(pgid, 0)) {
    if (Date.now() > deadline) {
      logger.warn({ child: name, pgid, graceMs: LEFTOVER_GRACE_MS }, `processes left by ${name} did not stop in time; killing them`);
      signalGroup(pgid, 'SIGKILL');
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
