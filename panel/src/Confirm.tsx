import { useEffect, useRef, useState } from 'react';

interface Props {
  /** The button's text, and its accessible name when it needs more (e.g. which instance). */
  label: string;
  ariaLabel?: string;
  question: string;
  /** The confirming button's text ("Yes, delete"). */
  yes: string;
  /** The accessible name of the question's group ("confirm delete"). */
  group: string;
  onYes: () => void;
}

/**
 * A destructive button that asks first. The keyboard lands on Cancel (the safe answer); Escape
 * or Cancel puts it back on the button.
 */
export function ConfirmButton({ label, ariaLabel, question, yes, group, onYes }: Props) {
  const [asking, setAsking] = useState(false);
  const trigger = useRef<HTMLButtonElement>(null);
  const refocus = useRef(false);
  useEffect(() => {
    if (!asking && refocus.current) {
      refocus.current = false;
      trigger.current?.focus();
    }
  }, [asking]);
  const cancel = (): void => {
    refocus.current = true;
    setAsking(false);
  };

  if (asking) {
    return (
      <span
        className="row wrap confirm"
        role="group"
        aria-label={group}
        onKeyDown={(e) => {
          if (e.key === 'Escape') cancel();
        }}
      >
        <span>{question}</span>
        <button
          type="button"
          className="danger"
          onClick={() => {
            setAsking(false);
            onYes();
          }}
        >
          {yes}
        </button>
        <button type="button" onClick={cancel} autoFocus>
          Cancel
        </button>
      </span>
    );
  }
  return (
    <button type="button" className="danger" ref={trigger} aria-label={ariaLabel} onClick={() => setAsking(true)}>
      {label}
    </button>
  );
}
