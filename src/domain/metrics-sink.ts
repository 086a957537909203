/**
 * What the parts of the daemon report for metrics. The default sink does nothing; the daemon
 * uses Prometheus counters unless metrics.mode is off. Nothing here may carry a secret or a message body.
 */
export interface MetricsSink {
  /** One send attempt through the API or a flow: sent, refused (4xx) or failed (5xx). */
  send(result: 'sent' | 'refused' | 'failed', code?: string): void;
  creditsSpent(amount: number): void;
  /** One webhook delivery attempt and how it ended. */
  webhookDelivery(result: 'delivered' | 'retry' | 'failed'): void;
  request(info: { method: string; route: string; status: number; ms: number }): void;
}

export const noMetrics: MetricsSink = {
  send: () => undefined,
  creditsSpent: () => undefined,
  webhookDelivery: () => undefined,
  request: () => undefined,
};

