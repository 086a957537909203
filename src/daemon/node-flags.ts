/**
 * What `node` runs the daemon with: systemd/gateway.service's ExecStart, `npm start`, and the
 * bench's daemons (test/unit/ops-systemd-unit.test.ts keeps the three in step). NODE_OPTIONS does
 * not accept these V8 flags, so they go on the command line.
 *
 * `--no-memory-reducer`: once allocation falls after a burst (a restart logging in thousands of
 * sessions, a wave of pairings), V8's memory reducer runs up to three full collections of the whole
 * heap in a row to hand memory back (`Mark-Compact (reduce)` in --trace-gc). A gateway's heap is its
 * sessions, live for as long as they are connected: those collections find little to free and cost
 * seconds of CPU at 5,000 sessions, the idle minute after the logins. The regular collections still
 * run whenever the heap grows; figures in README.md ("Performance").
 */
export const DAEMON_NODE_FLAGS: readonly string[] = ['--no-memory-reducer'];
