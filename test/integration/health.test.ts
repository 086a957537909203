import test from 'ava';
import { startTestDaemon } from '../helpers/daemon.js';

test('GET /healthz answers ok without auth', async (t) => {
  const d = await startTestDaemon();
  try {
    const res = await d.request('GET', '/healthz');
    t.is(res.status, 200);
    t.deepEqual(res.body, { ok: true, node: null, storage: 'files' });
  } finally {
    await d.close();
  }
});
