import { useEffect, useState } from 'react';
import { api, enc, every, type Session } from './api';
import { health } from './health';
import { StatusBadge } from './StatusBadge';

/** An agent's start page: their instances, each with its status in words and a way into its inbox. */
export function AgentHome({ session }: { session: Session }) {
  const [statuses, setStatuses] = useState<Record<string, { status: string; reason: string | null }>>({});
  useEffect(() => {
    const load = (background = false): void => {
      for (const i of session.instances) {
        api<{ status: string; reason: string | null }>('GET', `/api/${enc(i.instanceId)}/status`, undefined, { background }).then(
          (s) => setStatuses((m) => ({ ...m, [i.instanceId]: { status: s.status, reason: s.reason } })),
          () => undefined,
        );
      }
    };
    load();
    return every(5_000, () => load(true));
  }, [session.instances]);

  return (
    <section>
      <h1>Your instances</h1>
      {session.instances.length === 0 && <p className="muted">No instance is given to you yet: ask the administrator.</p>}
      <ul className="list" aria-label="your instances">
        {session.instances.map((i) => {
          const s = statuses[i.instanceId];
          const h = health(s?.status ?? '', s?.reason);
          return (
            <li key={i.instanceId} className="card instance" data-instance={i.instanceId}>
              <div className="instance-head">
                <a href={`#/i/${enc(i.instanceId)}/inbox`} className="title">
                  {i.name ?? i.instanceId}
                </a>
                {s && <StatusBadge status={s.status} health={h} testId="status" />}
              </div>
              <div className="instance-meta">
                <a href={`#/i/${enc(i.instanceId)}/inbox`}>Open the inbox</a>
              </div>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
