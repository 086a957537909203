import { useState } from 'react';
import { ApiError, api, clock, enc, errorText } from './api';
import { mayRing, setCallState, type CallSeen } from './calls';

const STATE_TEXT: Record<CallSeen['state'], string> = {
  ringing: '',
  rejected: 'rejected',
  'auto-rejected': 'rejected automatically (settings: reject calls)',
  over: 'over (no longer ringing when rejected)',
};

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
        <span aria-hidden="true">{call.isVideo ? '🎥' : '📞'} </span>
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
