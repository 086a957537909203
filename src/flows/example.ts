/** The example flow of the flows issue: a menu with opening hours and a handover to a person. */
export const EXAMPLE_FLOW = {
  name: 'support',
  start: 'welcome',
  nodes: {
    welcome: { type: 'message', text: 'Hi {{name}}! 1 = opening hours, 2 = talk to a person', next: 'route' },
    route: { type: 'condition', rules: [{ equals: '1', next: 'hours' }, { regex: '^(2|human|agent)$', next: 'agent' }], else: 'welcome' },
    hours: { type: 'message', text: 'Mon-Fri 9-17.' },
    agent: { type: 'handover', text: 'A colleague will answer you here shortly.' },
  },
} as const;

/** A fresh, mutable copy (tests change nodes to make it invalid). */
export function exampleFlow(): { name: string; start: string; nodes: Record<string, unknown> } {
  return structuredClone(EXAMPLE_FLOW) as unknown as { name: string; start: string; nodes: Record<string, unknown> };
}
