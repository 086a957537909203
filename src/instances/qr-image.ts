import QRCode from 'qrcode';

/**
 * The PNG data URL of a pairing QR, drawn once per QR. A client shows the QR by polling
 * GET /api/{id}/qr-code (every second or so, until the phone scans it), and drawing the PNG is
 * ~8 ms of synchronous CPU each time: with many instances pairing at once that was a visible part
 * of the daemon's longest turns. A QR string changes every 20 s; the newest few are kept.
 */
const MAX = 256;

/**
 * Grey (one byte a pixel, not RGBA) and PNG's "Up" filter on every row, where pngjs tries all five
 * filters on each row and keeps the best: a QR's rows repeat (each module is a few pixels tall), so
 * "Up" is what the search ends on anyway. The same pixels, 3,286 bytes instead of 5,538, and ~9 ms
 * of CPU instead of ~17 (200 drawings, /tmp micro benchmark on this machine). In the profile of 500
 * phones pairing, the filter search alone was 1.1 % of the daemon's CPU.
 */
const QR_OPTIONS = { errorCorrectionLevel: 'L', margin: 2, width: 264, rendererOpts: { filterType: 2, colorType: 0 } } as const;
const drawn = new Map<string, Promise<string>>();

export function drawQr(qr: string): Promise<string> {
  let image = drawn.get(qr);
  if (image === undefined) {
    image = QRCode.toDataURL(qr, QR_OPTIONS);
    drawn.set(qr, image);
    // A failed drawing is not kept: the next poll tries again.
    image.catch(() => drawn.delete(qr));
    if (drawn.size > MAX) drawn.delete(drawn.keys().next().value as string);
  }
  return image;
}
