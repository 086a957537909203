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
 *
 * `--max-semi-space-size=32` (MiB; V8's default is 16 on 64-bit): the young generation twice as
 * large. While 1,000 phones paired (2.5 a second, each with a first history sync) the daemon ran
 * ~3,400 scavenges of 7 ms on average and up to 52 ms, each copying ~2.7 MB of objects that were
 * still in use (a history sync's messages live across awaits); with more room most of them die
 * before the next one: 1,660 scavenges, 14.2 instead of 24.2 s of pauses, gaps of the event loop
 * over 100 ms 2 instead of 10 to 12, the longest 116 instead of 242 to 286 ms, the paced sends'
 * p99 87 instead of 186 to 208 ms (`--trace-gc-nvp` and a 5 ms gap recorder, one run against two).
 * RSS after pairing was lower (964 against 1,058 to 1,082 MiB): fewer objects are promoted.
 */
export const DAEMON_NODE_FLAGS: readonly string[] = ['--no-memory-reducer', '--max-semi-space-size=32'];
