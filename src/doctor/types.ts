/** How one doctor check ended. `warn` is reported but does not fail the run; `skip` means a prerequisite failed. */
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

export interface CheckResult {
  /** Stable id for scripts: node, baileys, data-dir, permissions, config, store, port, whatsapp, database. */
  name: string;
  status: CheckStatus;
  /** One line: what was found. */
  message: string;
  /** What to do about it (absent when nothing needs doing). */
  fix?: string;
  /** The offending files, when the check is about files. */
  files?: string[];
}

export interface DoctorReport {
  ok: boolean;
  dataDir: string;
  checks: CheckResult[];
}
