import Type from 'typebox';
import { closed } from '../schemas/common.js';

const ProxyDescription =
  "This instance's WhatsApp socket and its media transfers go through it, from the next connect on (POST /api/{id}/restart applies it now): `http://`, `https://` (HTTP CONNECT) or `socks5://` (the proxy resolves host names), `[user:password@]host[:port]`. Never shown back with its user and password: GET shows `socks5://***@host:1080`, and PUTting that back keeps the stored one. A proxy that refuses (nothing listens, 407, wrong SOCKS credentials) shows as the status reason `proxy refused: ...`, retried like any network failure. null: connect directly. A sandbox keeps it but has no socket to use it on.";

const settingsFields = {
  alwaysOnline: Type.Boolean({ description: 'Show the account online (`available`) whenever it connects; turning it off sends `unavailable`.' }),
  autoRead: Type.Boolean({ description: 'Mark every received message read (the sender sees the blue ticks) once it is stored.' }),
  ignoreGroups: Type.Boolean({
    description:
      'Keep group traffic out of webhooks, live events, flows and history: messages received in groups (also those the account wrote there from its phone), group.joined, group.updated, group.participants, reactions, edits, deletes, votes and chat states in groups. Calls ring as usual; sends to groups through this gateway still report message.status.',
  }),
  ignoreStatus: Type.Boolean({
    description:
      "Keep status@broadcast traffic out of webhooks, live events, flows and history: the receipts, reactions and votes on the account's own status posts (the posts themselves stay in history as sent). Contacts' status posts never reach them either way.",
  }),
  syncFullHistory: Type.Boolean({ description: "Ask WhatsApp for the phone's full history when a device links (Baileys' `syncFullHistory`); used at the next connect, so it matters from the next pairing on." }),
};

const CallsView = closed({
  autoReject: Type.Boolean({ description: 'Reject every incoming call (call.received still arrives).' }),
  rejectMessage: Type.Optional(Type.String({ description: 'A text sent to the caller after each automatic reject (one credit, like any send).' })),
});

/** GET and PUT answer: every setting, defaults filled in. */
export const SettingsBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  calls: CallsView,
  ...settingsFields,
  proxy: Type.Union([Type.String(), Type.Null()], { description: ProxyDescription }),
});

/** PUT: any subset; what it leaves out keeps its value (`calls` field by field). */
export const SettingsInput = closed({
  calls: Type.Optional(
    closed({
      autoReject: Type.Optional(Type.Boolean()),
      rejectMessage: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 4096 }), Type.Null()], { description: 'null removes it.' })),
    }),
  ),
  alwaysOnline: Type.Optional(settingsFields.alwaysOnline),
  autoRead: Type.Optional(settingsFields.autoRead),
  ignoreGroups: Type.Optional(settingsFields.ignoreGroups),
  ignoreStatus: Type.Optional(settingsFields.ignoreStatus),
  syncFullHistory: Type.Optional(settingsFields.syncFullHistory),
  proxy: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 2048 }), Type.Null()], { description: ProxyDescription })),
});
