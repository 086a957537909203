import test from 'ava';
import { inflateSync } from 'node:zlib';
import QRCode from 'qrcode';
import { drawQr, qrSegments } from '../../src/instances/qr-image.js';

// Rule (issue "Performance, round 2", items 3 and 4): polling GET /api/{id}/qr-code draws each QR's
// PNG once, not on every poll; a new QR gets its own image, drawn cheaply (grey, one PNG filter, our
// own PNG writer) with the same pixels as the qrcode library's own renderer draws for the same symbol.

test('the same QR is drawn once; another QR is drawn anew', async (t) => {
  const first = drawQr('2@pairing-ref-1,noise,identity,adv');
  t.is(drawQr('2@pairing-ref-1,noise,identity,adv'), first, 'the same promise: not drawn again');
  const image = await first;
  t.regex(image, /^data:image\/png;base64,/);
  const other = await drawQr('2@pairing-ref-2,noise,identity,adv');
  t.regex(other, /^data:image\/png;base64,/);
  t.not(other, image);
});

/**
 * Decodes an 8-bit PNG, grey (colour type 0) or RGBA (6), into one byte of luminance a pixel: enough
 * to compare two drawings of one QR, whatever their filters and colour types.
 */
function pixels(dataUrl: string): { width: number; height: number; grey: Uint8Array } {
  const png = Buffer.from(dataUrl.replace(/^data:image\/png;base64,/, ''), 'base64');
  let at = 8;
  let width = 0;
  let height = 0;
  let colourType = -1;
  const idat: Buffer[] = [];
  while (at < png.length) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const data = png.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      if (data[8] !== 8) throw new Error(`bit depth ${data[8]}`);
      colourType = data[9]!;
    }
    if (type === 'IDAT') idat.push(data);
    at += 12 + length;
  }
  const bpp = colourType === 0 ? 1 : colourType === 6 ? 4 : 0;
  if (bpp === 0) throw new Error(`colour type ${colourType}`);
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * bpp;
  const rows: Uint8Array[] = [];
  let prev = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = Uint8Array.from(raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1)));
    for (let x = 0; x < stride; x++) {
      const a = x >= bpp ? line[x - bpp]! : 0;
      const b = prev[x]!;
      const c = x >= bpp ? prev[x - bpp]! : 0;
      const p = a + b - c;
      const paeth = Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c) ? a : Math.abs(p - b) <= Math.abs(p - c) ? b : c;
      const add = [0, a, b, (a + b) >> 1, paeth][filter];
      if (add === undefined) throw new Error(`filter ${filter}`);
      line[x] = (line[x]! + add) & 0xff;
    }
    rows.push(line);
    prev = line;
  }
  const grey = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) grey[y * width + x] = rows[y]![x * bpp]!;
  return { width, height, grey };
}

const QRS = [
  '2@Q1xW3eR5tY7uI9oP1aS3dF5gH7jK9lZ1xC3vB5nM7,9fV2bN4mK6jH8gF0dS2aQ4wE6rT8yU0iO2pL4kJ6hG8=,Zq3Xw5Ec7Rv9Tb1Yn3Um5Ik7Ol9Pa1Sd3Fg5Hj7Kl9=,mN1bV3cX5zL7kJ9hG1fD3sA5',
  // Baileys' shape: ref, noise key, identity key, adv secret (base64), then the platform flag.
  '2@hZ8n3kQmV0xYpL2sT9wR4cB7fJ1dG6eA5uI3oK8lM2nP4qS6tU8vW0xY2zA4bC6dE8fG0hI2jK4lM6nO8pQ0rS2tU4vW6xY8zA0bC2dE4fG6hI8jK0lM2nO4pQ6rS8tU0vW2x,4XfQ9kLm2Np7Rs1Tv5Wy8Za3Bc6De9Fg2Hi5Jk8Lm1No=,Pq4Rs7Tu0Vw3Xy6Za9Bc2De5Fg8Hi1Jk4Lm7No0Pq3Rs=,Tu6Vw9Xy2Za5Bc8De1Fg4Hi7Jk0Lm3No6Pq9Rs2Tu5Vw=,1',
  'x',
];

test('the drawing is grey with one filter, and shows the same pixels as the library renders for the same symbol (pngjs searching every filter in RGBA)', async (t) => {
  for (const qr of QRS) await samePixels(t, qr);
});

async function samePixels(t: import('ava').ExecutionContext, qr: string): Promise<void> {
  const ours = await drawQr(qr);
  const searched = await QRCode.toDataURL(qrSegments(qr), { errorCorrectionLevel: 'L', margin: 2, width: 264 });
  const a = pixels(ours);
  const b = pixels(searched);
  t.deepEqual([a.width, a.height], [b.width, b.height]);
  t.true(Buffer.from(a.grey).equals(Buffer.from(b.grey)), 'the same pixels');
  t.true(new Set(a.grey).size === 2, 'black and white only');
  t.true(ours.length < searched.length, `smaller: ${ours.length} against ${searched.length} characters`);
}
