import { renderTemplate, type CompiledFlow } from './compiled.js';
import type { FlowNode } from './types.js';

/** What one inbound message makes the bot do, before anything is sent or stored. */
export interface RunPlan {
  /** Texts to send, in order. */
  sends: string[];
  /** Where the next inbound message starts (null: at `start`). */
  position: string | null;
  /** Set when the run reached a handover node. */
  handover: { node: string } | null;
  /** The run hit the step cap (a defence; validation should make it unreachable). */
  capped: boolean;
}

/** Steps one inbound message may take; validation keeps real flows far below it. */
export const MAX_STEPS = 64;

/**
 * Runs the flow for one inbound message. The run starts at the conversation's position (or
 * `start`); if that node is a condition it evaluates the message. Message nodes send and move on;
 * any later condition node stops the run and waits there for the next message; a handover sends
 * its text and mutes the chat; a missing target ends the flow.
 */
export function runFlow(compiled: CompiledFlow, position: string | null, input: { text: string; name: string; phone: string }): RunPlan {
  const { flow } = compiled;
  const plan: RunPlan = { sends: [], position: null, handover: null, capped: false };
  const vars = { name: input.name, phone: input.phone };
  let id: string | undefined = position !== null && Object.hasOwn(flow.nodes, position) ? position : flow.start;
  for (let step = 0; id !== undefined; step++) {
    if (step >= MAX_STEPS) {
      plan.capped = true;
      plan.position = null;
      return plan;
    }
    const node: FlowNode = flow.nodes[id]!;
    switch (node.type) {
      case 'message':
        plan.sends.push(renderTemplate(node.text, vars));
        id = node.next;
        break;
      case 'condition': {
        if (step > 0) {
          plan.position = id;
          return plan;
        }
        const rules = compiled.rules.get(id) ?? [];
        const hit = rules.find((r) => r.test(input.text));
        id = hit ? hit.next : node.else;
        break;
      }
      case 'handover':
        if (node.text !== undefined) plan.sends.push(renderTemplate(node.text, vars));
        plan.handover = { node: id };
        plan.position = node.next ?? null;
        return plan;
    }
  }
  return plan;
}
