import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { api, enc, errorText, type InstanceView } from './api';

interface UsageDay {
  date: string;
  sent: number;
  debited: number;
}
interface Usage {
  from: string;
  to: string;
  days: UsageDay[];
  sent: number;
  debited: number;
}

interface Props {
  id: string;
  admin: boolean;
  view: InstanceView | null;
  read: { premium: boolean; quotaRemaining: string | number } | null;
  premiumUntil: string;
  reload: () => Promise<void>;
}

/** The plan: premium, credits, the quota; the admin adds, refunds and extends, and sees the usage per day. */
export function PlanCard({ id, admin, view, read, premiumUntil, reload }: Props) {
  const [addCredits, setAddCredits] = useState('100');
  const [refund, setRefund] = useState('10');
  const [days, setDays] = useState('30');
  const [said, setSaid] = useState<{ ok: boolean; text: string } | null>(null);
  const [usage, setUsage] = useState<Usage | null>(null);

  const loadUsage = useCallback(async () => {
    if (!admin) return;
    try {
      setUsage(await api<Usage>('GET', `/api/instances/${enc(id)}/usage`));
    } catch {
      setUsage(null);
    }
  }, [admin, id]);
  useEffect(() => void loadUsage(), [loadUsage]);

  const write = (what: string, path: string, body: unknown) => async (e: FormEvent) => {
    e.preventDefault();
    setSaid(null);
    try {
      await api('POST', path, body);
      await Promise.all([reload(), loadUsage()]);
      setSaid({ ok: true, text: what });
    } catch (err) {
      setSaid({ ok: false, text: errorText(err) });
    }
  };

  const plan = view ?? read;
  const max = Math.max(1, ...(usage?.days ?? []).map((d) => d.sent));
  return (
    <div className="card" aria-label="plan">
      <h2>Plan</h2>
      <dl>
        <dt>Premium</dt>
        <dd data-testid="premium">{plan?.premium ? `yes, until ${premiumUntil}` : 'no'}</dd>
        {view && (
          <>
            <dt>Credits</dt>
            <dd data-testid="credits">{String(view.credits ?? '')}</dd>
          </>
        )}
        <dt>Quota remaining</dt>
        <dd data-testid="quota">{String(plan?.quotaRemaining ?? '')}</dd>
      </dl>
      {admin ? (
        <>
          <form className="row wrap" onSubmit={(e) => void write(`Added ${addCredits} credits.`, `/api/instances/${enc(id)}/credits`, { add: Number(addCredits) })(e)}>
            <label>
              Add credits
              <input name="credits" type="number" min={1} step={1} value={addCredits} onChange={(e) => setAddCredits(e.target.value)} required />
            </label>
            <button type="submit">Add credits</button>
          </form>
          <form className="row wrap" onSubmit={(e) => void write(`Refunded ${refund} credits.`, `/api/instances/${enc(id)}/credits`, { add: -Number(refund) })(e)}>
            <label>
              Refund credits
              <input name="refund" type="number" min={1} step={1} value={refund} onChange={(e) => setRefund(e.target.value)} required aria-describedby="refund-note" />
            </label>
            <button type="submit">Refund credits</button>
          </form>
          <p className="muted" id="refund-note">
            A refund takes back credits no send holds; never more than the instance has.
          </p>
          <form className="row wrap" onSubmit={(e) => void write(`Premium extended by ${days} days.`, `/api/instances/${enc(id)}/premium`, { days: Number(days) })(e)}>
            <label>
              Premium days
              <input name="days" type="number" min={1} step={1} value={days} onChange={(e) => setDays(e.target.value)} required />
            </label>
            <button type="submit">Extend premium</button>
          </form>
        </>
      ) : (
        <p className="muted">Credits and premium are changed by the administrator.</p>
      )}
      <p className={`said ${said ? (said.ok ? 'ok' : 'error') : ''}`} role={said && !said.ok ? 'alert' : 'status'}>
        {said?.text ?? ''}
      </p>
      {admin && usage && (
        <div className="usage" data-testid="usage">
          <h3>
            Usage {usage.from} to {usage.to}
          </h3>
          <p data-testid="usage-total">
            {usage.sent} sent · {usage.debited} credits debited
          </p>
          {usage.days.length === 0 ? (
            <p className="muted">Nothing sent yet in this period.</p>
          ) : (
            <table aria-label="usage per day" className="usage-table">
              <thead>
                <tr>
                  <th scope="col">Day</th>
                  <th scope="col">Sent</th>
                  <th scope="col">Debited</th>
                  <th scope="col">
                    <span className="sr-only">Bar</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {usage.days.map((d) => (
                  <tr key={d.date} data-day={d.date}>
                    <td>{d.date}</td>
                    <td>{d.sent}</td>
                    <td>{d.debited}</td>
                    <td className="bar-cell" aria-hidden="true">
                      <span className="bar" data-w={Math.round((d.sent / max) * 10)} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
    </div>
  );
}
