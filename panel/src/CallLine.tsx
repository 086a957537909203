import { useState } from 'react';
import { ApiError, api, clock, enc, errorText } from './api';
import { mayRing, setCallState, type CallSeen } from './calls';

const STATE_TEXT: Record<CallSeen['state'], string> = {
  ringing: '',
  rejected: 'rejected',
  'auto-rejected': 'rejected automatically (settings: reject calls)',
  over: 'over (no longer ringing when rejected)',
};

/** A handset or a camera, drawn (an emoji needs a font the system may lack). */
function CallIcon({ video }: { video: boolean }) {
  return (
    <svg className="call-icon" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false">
      {video ? (
        <path fill="currentColor" d="M3 6h11a2 2 0 0 1 2 2v1.6l4.4-2.9A1 1 0 0 1 22 7.5v9a1 1 0 0 1-1.6.8L16 14.4V16a2 2 0 0 1-2 2H3a2 2 0 0 1-2-2V8a2 2 0 0 1 2-2z" />
      ) : (
        <path
          fill="currentColor"
          d="M6.6 10.8a15.1 15.1 0 0 0 6.6 6.6l2.2-2.2a1 1 0 0 1 1-.25 11.4 11.4 0 0 0 3.6.57 1 1 0 0 1 1 1V20a1 1 0 0 1-1 1A17 17 0 0 1 3 4a1 1 0 0 1 1-1h3.5a1 1 0 0 1 1 1c0 1.25.2 2.45.57 3.57a1 1 0 0 1-.25 1l-2.2 2.2z"
        />
      )}
    </svg>
  );
}

/** Who called, in words: the phone when the gateway knows it. */
export const callerOf = (c: CallSeen): string => c.from ?? c.sender.split('@')[0]!;

/**
 * An incoming call in the conversation: voice or video, when, what became of it, and a Reject
 * button while it may still ring (`canReject`: an agent's session may not reject calls).
 */
export function CallLine({ id, call, now, canReject, onSaid }: { id: string; call: CallSeen; now: number; canReject: boolean; onSaid: (ok: boolean, text: string) => void }) {
  const [busy, setBusy] = useState(false);
  const kind = call.isVideo ? 'video' : 'voice';
  const ringing = mayRing(call, now);

  const reject = async (): Promise<void> => {
    setBusy(true);
    try {
      await api('POST', `/api/${enc(id)}/calls/${enc(call.callId)}/reject`);
      setCallState(id, call.callId, 'rejected');
      onSaid(true, `Rejected the ${kind} call from ${callerOf(call)}.`);
    } catch (err) {
      // Answered on the phone, hung up, or rejected elsewhere: the gateway no longer knows it.
      if (err instanceof ApiError && err.status === 404) {
        setCallState(id, call.callId, 'over');
        onSaid(false, `The call from ${callerOf(call)} was already over.`);
      } else onSaid(false, errorText(err));
    } finally {
      setBusy(false);
    }
  };

  const state = STATE_TEXT[call.state];
  return (
    <li className="call" data-call={call.callId} data-call-state={call.state}>
      <span className="call-what">
        <CallIcon video={call.isVideo} />
        Incoming {kind} call{call.isGroup ? ` (group call, from ${callerOf(call)})` : ''}
        {state && <span className="call-state"> · {state}</span>}
        {!state && !ringing && <span className="call-state"> · no longer ringing</span>}
      </span>
      {ringing && canReject && (
        <button type="button" className="danger small" disabled={busy} onClick={() => void reject()} aria-label={`Reject the ${kind} call from ${callerOf(call)}`}>
          Reject
        </button>
      )}
      <span className="time" title={call.timestamp}>
        {clock(call.timestamp)}
      </span>
    </li>
  );
}
