/**
 * What the first `gateway start` says once the daemon listens (contract part 3, "First run"):
 * where the panel is, how to sign in, and the next command. The server secret itself was printed
 * just before (on stderr, once) and is never repeated here or in the log.
 */
export interface FirstRun {
  panelUrl: string | null;
  signIn: string;
  next: string[];
}

export function firstRun(panelUrl: string | null): FirstRun {
  return {
    panelUrl,
    signIn: panelUrl
      ? 'open the panel and sign in with the server secret shown above (operators: gateway operator add NAME --role admin|agent)'
      : 'the panel is off (panel.enabled); use the REST API with the server secret shown above (X-API-Secret)',
    next: ['gateway instance create --name shop --sandbox   (try it without a phone)', 'gateway instance create --name shop && gateway pair INSTANCE_ID   (pair a real phone)'],
  };
}

/** The same as text for a person at a terminal. */
export function firstRunText(f: FirstRun): string {
  return [
    '',
    f.panelUrl ? `Panel: ${f.panelUrl}` : 'Panel: off (panel.enabled is false)',
    `Sign in: ${f.signIn}`,
    'Next: create an instance and pair it, in another terminal:',
    ...f.next.map((n) => `  ${n}`),
    '',
    '',
  ].join('\n');
}
