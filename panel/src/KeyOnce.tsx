import { useRef, useState } from 'react';

/** A secret shown this once, with a copy button. */
export function KeyOnce({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  const [copied, setCopied] = useState<'' | 'yes' | 'no'>('');
  const code = useRef<HTMLElement>(null);

  const copy = async (): Promise<void> => {
    try {
      // The clipboard API exists in secure contexts only (HTTPS, or the loopback address).
      if (!navigator.clipboard) throw new Error('no clipboard');
      await navigator.clipboard.writeText(value);
      setCopied('yes');
    } catch {
      // Selected instead, for Ctrl+C.
      const range = document.createRange();
      if (code.current) range.selectNodeContents(code.current);
      window.getSelection()?.removeAllRanges();
      window.getSelection()?.addRange(range);
      setCopied('no');
    }
  };

  return (
    <div className="card once" role="status">
      <p>
        <strong>{label}</strong> — shown this once; store it now.
      </p>
      <code className="key" data-testid="new-key" ref={code}>
        {value}
      </code>
      <div className="row wrap">
        <button type="button" onClick={() => void copy()}>
          {copied === 'yes' ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={onDone}>
          Done
        </button>
        {copied === 'no' && <span className="muted">Selected: press Ctrl+C to copy.</span>}
      </div>
    </div>
  );
}
