import test from 'ava';
import { decideOnClose, retryingReason, CLOSE_CODES } from '../../src/connection/baileys/reconnect.js';
import { retryPending } from '../../src/pairing/pair-protocol.js';

const settings = { maxReconnectAttempts: 3, maxQrRefreshes: 2, reconnectBaseMs: 1000, reconnectMaxMs: 8000 };

/**
 * The `disconnected` reasons BaileysConnection shows for a close decision (see its onClose,
 * connect and giveUp): while waiting, during the attempt, and right after a logout.
 */
function shownReasons(decision: ReturnType<typeof decideOnClose>, failures: number): string[] {
  if (decision.action === 'stop') return [decision.reason];
  const waiting = retryingReason(decision, 'some cause', failures, settings);
  const shown = [waiting, `${waiting.replace(/ (in \d+ s|now)$/, '')}: connecting`];
  if (decision.clearCredentials) shown.push(decision.reason);
  return shown;
}

test('gateway pair waits through every reconnect the Baileys connection schedules', (t) => {
  const codes = [undefined, CLOSE_CODES.timedOut, CLOSE_CODES.connectionClosed, CLOSE_CODES.loggedOut, CLOSE_CODES.multideviceMismatch, CLOSE_CODES.badSession, CLOSE_CODES.unavailableService, CLOSE_CODES.restartRequired];
  let checked = 0;
  for (const code of codes) {
    for (const failures of [1, 2, 3]) {
      const decision = decideOnClose({ code, failures, qrShown: 0, paired: true }, settings, () => 0.5);
      if (decision.action !== 'reconnect' || decision.delayMs === 0) continue;
      for (const reason of shownReasons(decision, failures)) {
        t.true(retryPending(reason), reason);
        checked += 1;
      }
    }
  }
  t.true(checked > 10);
});

test('gateway pair stops at every give-up of the Baileys connection', (t) => {
  const stops = [
    decideOnClose({ code: CLOSE_CODES.forbidden, failures: 1, qrShown: 0, paired: true }, settings),
    decideOnClose({ code: CLOSE_CODES.versionRefused, failures: 1, qrShown: 0, paired: true }, settings),
    decideOnClose({ code: CLOSE_CODES.connectionReplaced, failures: 1, qrShown: 0, paired: true }, settings),
    decideOnClose({ code: CLOSE_CODES.timedOut, failures: 1, qrShown: 2, paired: false }, settings),
    decideOnClose({ code: CLOSE_CODES.timedOut, failures: 4, qrShown: 0, paired: true }, settings),
    decideOnClose({ code: CLOSE_CODES.loggedOut, failures: 4, qrShown: 0, paired: true }, settings),
  ];
  for (const decision of stops) {
    t.is(decision.action, 'stop');
    t.false(retryPending(decision.reason), decision.reason);
  }
  for (const reason of ['QR not scanned (5 codes shown)', 'stopped', 'logged out', 'could not start the connection: EACCES', null]) {
    t.false(retryPending(reason), String(reason));
  }
});
