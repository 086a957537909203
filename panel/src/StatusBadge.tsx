import type { Health } from './health';

/** The connection's state in words; the raw status stays in `data-status` (and the title) for support. */
export function StatusBadge({ status, health, testId }: { status: string; health: Health; testId: string }) {
  return (
    <span className={`status t-${health.tone}`} data-testid={testId} data-status={status} title={status}>
      {health.label}
    </span>
  );
}

/** Why, and what to do, under the badge. */
export function HealthNote({ health, reason }: { health: Health; reason: string | null | undefined }) {
  if (!health.cause && !health.action) return null;
  return (
    <div className="health" data-testid="health">
      {health.cause && <p className="health-cause">{health.cause}</p>}
      {health.action && (
        <p className="health-action">
          <strong>What to do:</strong> {health.action}
        </p>
      )}
      {reason && health.tone === 'bad' && <p className="muted health-raw">Reported: {reason}</p>}
    </div>
  );
}
