import { spawn } from 'node:child_process';
import { GatewayError } from '../domain/errors.js';

/** WhatsApp's voice notes: Opus in Ogg, mono. */
export const VOICE_MIMETYPE = 'audio/ogg; codecs=opus';

/** Longest a conversion may take (a 16 MiB file converts in a few seconds). */
const CONVERT_TIMEOUT_MS = 120_000;

/**
 * Converts an audio file into a voice note (Opus in Ogg, mono, 48 kHz, 32 kbit/s: what the
 * WhatsApp apps record) with ffmpeg. No ffmpeg (the `media.ffmpegPath` program cannot be run):
 * 415 naming the setting and what to send instead; audio ffmpeg cannot read: 415 with its reason.
 */
export function convertToVoice(input: string, output: string, ffmpegPath: string, inputType: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const args = ['-hide_banner', '-loglevel', 'error', '-nostdin', '-i', input, '-vn', '-map_metadata', '-1', '-ac', '1', '-ar', '48000', '-c:a', 'libopus', '-b:a', '32k', '-application', 'voip', '-f', 'ogg', '-y', output];
    let child;
    try {
      child = spawn(ffmpegPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (err) {
      reject(noFfmpeg(ffmpegPath, inputType, err));
      return;
    }
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < 4096) stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), CONVERT_TIMEOUT_MS);
    child.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(err.code === 'ENOENT' || err.code === 'EACCES' ? noFfmpeg(ffmpegPath, inputType, err) : err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else {
        const why = signal ? `stopped after ${CONVERT_TIMEOUT_MS / 1000} s` : (stderr.trim().split('\n').pop() ?? `exit ${code}`).slice(0, 200);
        reject(new GatewayError('UNSUPPORTED_MEDIA_TYPE', `this ${inputType} could not be converted to a voice note (ffmpeg: ${why})`));
      }
    });
  });
}

function noFfmpeg(ffmpegPath: string, inputType: string, cause: unknown): GatewayError {
  return new GatewayError(
    'UNSUPPORTED_MEDIA_TYPE',
    `a voice note is ${VOICE_MIMETYPE}; converting ${inputType} needs ffmpeg, which could not be run (media.ffmpegPath: ${JSON.stringify(ffmpegPath)}). Install it (Debian: apt-get install ffmpeg) or send Opus in Ogg`,
    { cause },
  );
}
