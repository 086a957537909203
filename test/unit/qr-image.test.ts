import test from 'ava';
import { drawQr } from '../../src/instances/qr-image.js';

// Rule (issue "Performance, round 2", item 4): polling GET /api/{id}/qr-code draws each QR's PNG
// once, not on every poll; a new QR gets its own image.

test('the same QR is drawn once; another QR is drawn anew', async (t) => {
  const first = drawQr('2@pairing-ref-1,noise,identity,adv');
  t.is(drawQr('2@pairing-ref-1,noise,identity,adv'), first, 'the same promise: not drawn again');
  const image = await first;
  t.regex(image, /^data:image\/png;base64,/);
  const other = await drawQr('2@pairing-ref-2,noise,identity,adv');
  t.regex(other, /^data:image\/png;base64,/);
  t.not(other, image);
});
