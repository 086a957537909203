import QRCode from 'qrcode';

/**
 * The PNG data URL of a pairing QR, drawn once per QR. A client shows the QR by polling
 * GET /api/{id}/qr-code (every second or so, until the phone scans it), and drawing the PNG is
 * ~8 ms of synchronous CPU each time: with many instances pairing at once that was a visible part
 * of the daemon's longest turns. A QR string changes every 20 s; the newest few are kept.
 */
const MAX = 256;
const drawn = new Map<string, Promise<string>>();

export function drawQr(qr: string): Promise<string> {
  let image = drawn.get(qr);
  if (image === undefined) {
    image = QRCode.toDataURL(qr, { errorCorrectionLevel: 'L', margin: 2, width: 264 });
    drawn.set(qr, image);
    // A failed drawing is not kept: the next poll tries again.
    image.catch(() => drawn.delete(qr));
    if (drawn.size > MAX) drawn.delete(drawn.keys().next().value as string);
  }
  return image;
}
