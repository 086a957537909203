import QRCode from 'qrcode';
import { crc32, deflateSync } from 'node:zlib';

/**
 * The PNG data URL of a pairing QR, drawn once per QR. A client shows the QR by polling
 * GET /api/{id}/qr-code (every second or so, until the phone scans it). A QR string changes every
 * 20 s; the newest few are kept.
 *
 * The symbol comes from the qrcode library (`QRCode.create`); the PNG is written here, not by the
 * library's renderer (pngjs). Measured reason (README, "Dependencies"): with many phones pairing,
 * the daemon's event loop lag is mostly garbage collection, and in the allocation profile of 300
 * accounts pairing (`BENCH_SESSIONS_ALLOC`) drawing their QRs allocated 2.0 of 13.9 GB: pngjs
 * builds an RGBA copy of the image and tries every filter on it, and the library's default
 * segmentation of the text (a shortest path over a graph of candidate segments) adds 0.76 GB. Here:
 * one byte-mode segment (WhatsApp's QR text is mostly base64, where byte mode is what the search
 * ends on), a grey image filtered "Up" on every row (a QR's rows repeat: each module is several
 * pixels tall) and Node's own deflate. `node --import=tsx bench/qr-image.ts`: 2.2 against 7.7 ms
 * and 149 KB against 3,465 KB allocated a drawing.
 */
const MAX = 256;
const WIDTH = 264;
const MARGIN = 2;
const drawn = new Map<string, Promise<string>>();

export function drawQr(qr: string): Promise<string> {
  let image = drawn.get(qr);
  if (image === undefined) {
    image = new Promise<string>((resolve) => resolve(`data:image/png;base64,${qrPng(qr).toString('base64')}`));
    drawn.set(qr, image);
    // A failed drawing is not kept: the next poll tries again.
    image.catch(() => drawn.delete(qr));
    if (drawn.size > MAX) drawn.delete(drawn.keys().next().value as string);
  }
  return image;
}

/** The symbol's segments: the whole text in byte mode (see above). */
export function qrSegments(qr: string): QRCode.QRCodeSegment[] {
  return [{ data: Buffer.from(qr, 'utf8'), mode: 'byte' }];
}

/**
 * The QR of `qr` as a PNG, WIDTH pixels square with a MARGIN-module quiet zone, black on white:
 * the same pixels as the qrcode library's renderer draws for these options (its `qrToImageData`:
 * a fractional scale, each pixel taking the module under it).
 */
export function qrPng(qr: string): Buffer {
  const { size, data } = QRCode.create(qrSegments(qr), { errorCorrectionLevel: 'L' }).modules;
  // Always WIDTH / modules: the largest symbol (version 40, 177 modules + margins) is narrower than WIDTH.
  const scale = WIDTH / (size + MARGIN * 2);
  const side = Math.floor((size + MARGIN * 2) * scale);
  const margin = MARGIN * scale;
  // One filter byte, then `side` grey bytes, a row; every row filtered "Up" (2): each byte is its
  // pixel minus the one above it, so a row equal to the previous one is all zeros.
  const raw = Buffer.alloc(side * (side + 1));
  const row = new Uint8Array(side);
  const previous = new Uint8Array(side);
  for (let i = 0; i < side; i++) {
    const inside = i >= margin && i < side - margin;
    const iSrc = Math.floor((i - margin) / scale);
    for (let j = 0; j < side; j++) {
      const dark = inside && j >= margin && j < side - margin && data[iSrc * size + Math.floor((j - margin) / scale)];
      row[j] = dark ? 0 : 255;
    }
    const at = i * (side + 1);
    raw[at] = 2;
    for (let j = 0; j < side; j++) raw[at + 1 + j] = (row[j]! - previous[j]!) & 0xff;
    previous.set(row);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header[8] = 8; // bit depth
  header[9] = 0; // grey; compression, filter method and interlace stay 0
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}
