/**
 * For the tests of the event loop's time slices (src/domain/time-slice.ts and its users): work of a
 * known cost, and how much of it ran between two runs of a timer. Counted in units, not
 * milliseconds, so a loaded machine (which only stretches each unit) cannot make a test fail or pass.
 */

/** Keeps the thread busy for `ms` (a stand-in for a piece of synchronous work). */
export function busy(ms: number): void {
  for (const until = performance.now() + ms; performance.now() < until; );
}

export interface TimerGaps {
  /** One unit of work done. */
  unitDone(): void;
  /** Stops the timer; the most units done between two of its runs (the last stretch included). */
  stop(): number;
  /** How often the timer ran so far. */
  readonly timerRuns: number;
}

/** Starts a timer that re-arms itself with `setTimeout(0)` and counts the units between its runs. */
export function watchTimerGaps(): TimerGaps {
  let units = 0;
  let most = 0;
  let runs = 0;
  let on = true;
  const tick = (): void => {
    most = Math.max(most, units);
    units = 0;
    runs += 1;
    if (on) setTimeout(tick, 0);
  };
  setTimeout(tick, 0);
  return {
    unitDone: () => {
      units += 1;
    },
    stop: () => {
      on = false;
      return Math.max(most, units);
    },
    get timerRuns() {
      return runs;
    },
  };
}
