/**
 * When a process entry (admin, proxy) should stop. Run alone, on SIGINT, SIGTERM or SIGHUP: SIGHUP
 * (a closed terminal, `kill -HUP`) is a graceful stop like SIGTERM, not Node's default of dying at
 * once (exit 129), which cut in-flight requests and lost the proxy's queued log records; nothing
 * reloads on it (the configuration is read at start only). Run by `npm start`
 * (scripts/start.ts sets `SVC_SUPERVISED=1` and forks it with an IPC channel), start.ts decides:
 * it stops every process in order (the proxy first, so its queued log records still reach admin),
 * which a process stopping on its own signal would upset when a supervisor signals them all at once
 * (systemd's default `KillMode=control-group`, pm2). So under start.ts a signal is passed on to it
 * as a `stop.request`, the process stops on start.ts's `stop` message, and it stops by itself when
 * the IPC channel closes (start.ts gone, e.g. SIGKILLed): nothing may outlive `npm start`.
 * A process forked by anything else (the tests, with an IPC channel but not the flag) stops on its
 * signals as before.
 */

/** The environment variable start.ts sets to `1` on the processes it supervises. */
export const SUPERVISED_ENV = 'SVC_SUPERVISED';

/** The signals on which a process stops gracefully (see the module docstring). */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Messages between start.ts and a supervised process, over the IPC channel. */
export type SupervisionMessage = { type: 'stop.request'; signal: string } | { type: 'stop' };

/**
 * Calls `stop(reason)` whenever this process should stop (possibly more than once: `stop` must be
 * idempotent). `reason` is the signal name, `supervisor` (start.ts asked) or `supervisor gone`.
 */
export function onStopRequest(stop: (reason: string) => void): void {
  const supervised = process.env[SUPERVISED_ENV] === '1' && typeof process.send === 'function' && process.connected;
  for (const signal of STOP_SIGNALS) {
    process.on(signal, () => {
      if (!supervised || !process.connected) return stop(signal);
      const request: SupervisionMessage = { type: 'stop.request', signal };
      process.send!(request, undefined, {}, (err) => {
        if (err) stop(signal);
      });
    });
  }
  if (!supervised) return;
  process.on('message', (m: Partial<SupervisionMessage> | null) => {
    if (m?.type === 'stop') stop('supervisor');
  });
  process.once('disconnect', () => stop('supervisor gone'));
}
