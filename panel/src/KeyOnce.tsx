import { useState } from 'react';

/** A secret shown this once, with a copy button. */
export function KeyOnce({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="card once" role="status">
      <p>
        <strong>{label}</strong> — shown this once; store it now.
      </p>
      <code className="key" data-testid="new-key">
        {value}
      </code>
      <div className="row">
        <button
          type="button"
          onClick={() => {
            void navigator.clipboard?.writeText(value).then(() => setCopied(true), () => setCopied(false));
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}
