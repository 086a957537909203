// preload.ts for child processes (the built daemon): plain JavaScript, so the child runs without
// tsx. With tsx's module hooks (a loader thread Node 20 talks to through Atomics.wait), a child
// daemon deadlocked on a lazy import() under load: its main thread slept in Atomics.wait forever
// (gdb: Builtin_AtomicsWait), and a send-media request never answered. Same key as cert.ts.
// With PROTOCOL_DOUBLE_MEDIA_HOST (mediaTrustEnv(host)), WhatsApp's CDN host is the double's media
// host for fetch() (history syncs, app-state snapshots: see cdn.mjs).
import { readFileSync } from 'node:fs';
import { WA_CERT_DETAILS } from '@whiskeysockets/baileys';
import { installCdn } from './cdn.mjs';

const root = JSON.parse(readFileSync(new URL('./root-key.json', import.meta.url), 'utf8'));
WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(root.public, 'hex');
WA_CERT_DETAILS.SERIAL = root.serial;
// Or `?media=host:port` on this module's URL: a daemon's session threads import it so (each thread
// has its own fetch to redirect, and several in-process daemons each their own double).
const mediaHost = new URL(import.meta.url).searchParams.get('media') ?? process.env.PROTOCOL_DOUBLE_MEDIA_HOST;
if (mediaHost) await installCdn(mediaHost);
