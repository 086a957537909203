import { useCallback, useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { ApiError, api, errorText, type Session } from './api';
import { settingsPath, type InstanceSettings, type SettingsChange } from './settings-api';

/** The form's fields: the settings as the controls hold them (text fields as typed). */
interface Form {
  autoReject: boolean;
  rejectMessage: string;
  alwaysOnline: boolean;
  autoRead: boolean;
  ignoreGroups: boolean;
  ignoreStatus: boolean;
  syncFullHistory: boolean;
  proxy: string;
}
type Flag = 'alwaysOnline' | 'autoRead' | 'ignoreGroups' | 'ignoreStatus' | 'syncFullHistory';
type Field = 'rejectMessage' | 'proxy';

const formOf = (s: InstanceSettings): Form => ({
  autoReject: s.calls.autoReject,
  rejectMessage: s.calls.rejectMessage ?? '',
  alwaysOnline: s.alwaysOnline,
  autoRead: s.autoRead,
  ignoreGroups: s.ignoreGroups,
  ignoreStatus: s.ignoreStatus,
  syncFullHistory: s.syncFullHistory,
  proxy: s.proxy ?? '',
});

const FLAGS: Array<[Flag, string, string]> = [
  ['alwaysOnline', 'Always online', 'Shows the account online whenever it connects; off, it goes offline.'],
  ['autoRead', 'Mark received messages read', 'Senders see the blue ticks as soon as the gateway stores their message.'],
  ['ignoreGroups', 'Ignore groups', 'Group messages and events stay out of webhooks, live events, the chatbot, history and this inbox. Calls still ring.'],
  ['ignoreStatus', 'Ignore status updates', "Receipts, reactions and votes on the account's own status posts stay out of webhooks and history."],
  ['syncFullHistory', "Sync the phone's full history", 'Asks WhatsApp for the full history when a phone links: it matters from the next pairing on.'],
];

const NAMES: Record<string, string> = {
  calls: 'calls',
  alwaysOnline: 'always online',
  autoRead: 'read marks',
  ignoreGroups: 'ignore groups',
  ignoreStatus: 'ignore status',
  syncFullHistory: 'full history',
  proxy: 'proxy',
};

/** What the form changes, and nothing else (PUT sends only that). */
function changeOf(saved: InstanceSettings, f: Form): SettingsChange {
  const c: SettingsChange = {};
  const calls: NonNullable<SettingsChange['calls']> = {};
  if (f.autoReject !== saved.calls.autoReject) calls.autoReject = f.autoReject;
  const message = f.rejectMessage.trim() === '' ? null : f.rejectMessage;
  if (message !== (saved.calls.rejectMessage ?? null)) calls.rejectMessage = message;
  if (Object.keys(calls).length > 0) c.calls = calls;
  for (const [flag] of FLAGS) if (f[flag] !== saved[flag]) c[flag] = f[flag];
  const proxy = f.proxy.trim() === '' ? null : f.proxy.trim();
  if (proxy !== saved.proxy) c.proxy = proxy;
  return c;
}

/** The field a 400 names (`proxy: ...`, `calls.rejectMessage: ...`), when it is one of the form's text fields. */
function fieldOf(err: unknown): Field | null {
  if (!(err instanceof ApiError) || err.status !== 400) return null;
  const path = err.message.split(':')[0]!.trim();
  return path === 'proxy' ? 'proxy' : path === 'calls.rejectMessage' ? 'rejectMessage' : null;
}

const LOCK_KEY = (id: string): string => `proxy-refused:${id}`;

/**
 * The instance's settings: calls, presence, read marks, what is ignored, history sync, and the
 * proxy. Saved with PUT, only what changed; a 400 shows under the field it names. An instance key
 * learns that it may not set the proxy from the 403 PROXY_NOT_ALLOWED (nothing says so before):
 * the field then turns read-only for this tab, and the rest of the change is saved without it.
 */
export function SettingsCard({ id, session, sandbox }: { id: string; session: Session; sandbox: boolean }) {
  const path = settingsPath(session, id);
  const [saved, setSaved] = useState<InstanceSettings | null>(null);
  const [form, setForm] = useState<Form | null>(null);
  const [errors, setErrors] = useState<Partial<Record<Field, string>>>({});
  const [said, setSaid] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const [proxyLocked, setProxyLocked] = useState(() => session.role === 'instance' && sessionStorage.getItem(LOCK_KEY(id)) === '1');

  const load = useCallback(async () => {
    try {
      const s = await api<InstanceSettings>('GET', path);
      setSaved(s);
      setForm(formOf(s));
    } catch (err) {
      setSaid({ ok: false, text: errorText(err) });
    }
  }, [path]);
  useEffect(() => void load(), [load]);

  const set = <K extends keyof Form>(key: K, value: Form[K]): void => {
    setForm((f) => (f ? { ...f, [key]: value } : f));
    if (key === 'proxy' || key === 'rejectMessage') setErrors((e) => ({ ...e, [key]: undefined }));
  };

  const put = (change: SettingsChange): Promise<InstanceSettings> => api<InstanceSettings>('PUT', path, change);

  const save = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    if (!saved || !form) return;
    setSaid(null);
    setErrors({});
    const change = changeOf(saved, form);
    const fields = Object.keys(change);
    if (fields.length === 0) {
      setSaid({ ok: true, text: 'Nothing changed.' });
      return;
    }
    // "***" stands for the stored user and password: kept only when the whole URL is put back.
    if (change.proxy && change.proxy.includes('***@')) {
      setErrors({ proxy: 'proxy: type the user and password again, or remove them (*** only hides the stored ones).' });
      return;
    }
    setBusy(true);
    try {
      const after = await put(change);
      setSaved(after);
      setForm(formOf(after));
      setSaid({ ok: true, text: `Saved: ${fields.map((f) => NAMES[f]).join(', ')}.${change.proxy !== undefined ? ' The proxy is used from the next connect.' : ''}` });
    } catch (err) {
      if (err instanceof ApiError && err.code === 'PROXY_NOT_ALLOWED') {
        sessionStorage.setItem(LOCK_KEY(id), '1');
        setProxyLocked(true);
        const { proxy: _refused, ...rest } = change;
        setForm((f) => (f ? { ...f, proxy: saved.proxy ?? '' } : f));
        if (Object.keys(rest).length === 0) setSaid({ ok: false, text: 'The proxy was not changed: only the administrator may set it.' });
        else {
          // The rest of the change did not wait on the proxy: saved without it.
          try {
            const after = await put(rest);
            setSaved(after);
            setForm(formOf(after));
            setSaid({ ok: false, text: `Saved: ${Object.keys(rest).map((f) => NAMES[f]).join(', ')}. The proxy was not changed: only the administrator may set it.` });
          } catch (again) {
            setSaid({ ok: false, text: errorText(again) });
          }
        }
      } else {
        const field = fieldOf(err);
        if (field) setErrors({ [field]: err instanceof Error ? err.message : String(err) });
        setSaid({ ok: false, text: field ? 'Not saved: see the field marked above.' : errorText(err) });
      }
    } finally {
      setBusy(false);
    }
  };

  const described = (...ids: Array<string | false>): string => ids.filter(Boolean).join(' ');
  const fieldError = (field: Field): ReactNode =>
    errors[field] ? (
      <p className="error field-error" id={`settings-${field}-error`}>
        {errors[field]}
      </p>
    ) : null;

  return (
    <form className="card settings" onSubmit={(e) => void save(e)} aria-labelledby="settings-title" noValidate>
      <h2 id="settings-title">Settings</h2>
      {!form ? (
        <p className="muted">{said ? '' : 'Loading…'}</p>
      ) : (
        <>
          <fieldset>
            <legend>Calls</legend>
            <div className="check">
              <label className="inline">
                <input type="checkbox" name="autoReject" checked={form.autoReject} onChange={(e) => set('autoReject', e.target.checked)} aria-describedby="settings-autoReject-note" />
                Reject calls automatically
              </label>
              <p className="muted" id="settings-autoReject-note">
                Every incoming call is rejected; it still shows in the inbox and reaches the webhook.
              </p>
            </div>
            <label>
              Message to the caller after a reject (optional)
              <textarea
                name="rejectMessage"
                rows={2}
                maxLength={4096}
                value={form.rejectMessage}
                onChange={(e) => set('rejectMessage', e.target.value)}
                aria-invalid={errors.rejectMessage ? true : undefined}
                aria-describedby={described('settings-rejectMessage-note', Boolean(errors.rejectMessage) && 'settings-rejectMessage-error')}
              />
            </label>
            <p className="muted" id="settings-rejectMessage-note">
              Sent after each automatic reject, as a text (one credit unless premium). Empty: none.
            </p>
            {fieldError('rejectMessage')}
          </fieldset>
          <fieldset>
            <legend>Messages and presence</legend>
            {FLAGS.map(([flag, label, note]) => (
              <div className="check" key={flag}>
                <label className="inline">
                  <input type="checkbox" name={flag} checked={form[flag]} onChange={(e) => set(flag, e.target.checked)} aria-describedby={`settings-${flag}-note`} />
                  {label}
                </label>
                <p className="muted" id={`settings-${flag}-note`}>
                  {note}
                </p>
              </div>
            ))}
          </fieldset>
          <label>
            Proxy
            <input
              type="text"
              name="proxy"
              inputMode="url"
              autoComplete="off"
              spellCheck={false}
              placeholder="socks5://user:password@proxy.example.com:1080"
              value={form.proxy}
              readOnly={proxyLocked}
              onChange={(e) => set('proxy', e.target.value)}
              aria-invalid={errors.proxy ? true : undefined}
              aria-describedby={described('settings-proxy-note', proxyLocked && 'settings-proxy-locked', Boolean(errors.proxy) && 'settings-proxy-error')}
            />
          </label>
          {fieldError('proxy')}
          {proxyLocked && (
            <p className="notice-line" id="settings-proxy-locked" data-testid="proxy-locked">
              Read only: this server lets only its administrator set an instance&apos;s proxy (<code>instances.tenantsMayProxy</code> is off). Ask them to set or change it.
            </p>
          )}
          <p className="muted" id="settings-proxy-note">
            <code>http://</code>, <code>https://</code> or <code>socks5://</code>, with <code>user:password@</code> when the proxy asks for them; empty: connect directly. Shown without its user and
            password. Used from the next connect (Restart connection applies it now).
            {sandbox ? ' A sandbox keeps it but has no socket to use it on.' : ''}
          </p>
          <button type="submit" disabled={busy}>
            Save settings
          </button>
        </>
      )}
      <p className={`said ${said ? (said.ok ? 'ok' : 'error') : ''}`} role={said && !said.ok ? 'alert' : 'status'}>
        {said?.text ?? ''}
      </p>
    </form>
  );
}
