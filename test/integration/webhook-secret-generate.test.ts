/**
 * Guards issue 21 item 19: `gateway webhook set ID --url U --secret generate` makes a new
 * Standard Webhooks secret (`whsec_` + base64 of 32 random bytes), stores it and prints it once,
 * so the README walk-through no longer hands every reader the same secret to copy. Deliveries are
 * then signed with it (checked with the `standardwebhooks` verifier). Runs the built CLI.
 */
import test from 'ava';
import { Webhook } from 'standardwebhooks';
import { runCli } from '../helpers/cli.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { inbound, startReceiver } from '../helpers/receiver.js';

test('--secret generate prints a new whsec_ secret once, and deliveries verify with it', async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const d = await startTestDaemon({ config: { webhooks: { allowPrivateTargets: true } } });
  t.teardown(() => d.close());
  const inst = await d.connectedSandbox();

  const set = await runCli(['webhook', 'set', inst.id, '--url', receiver.url, '--secret', 'generate', '--json'], { dataDir: d.dataDir });
  t.is(set.code, 0, set.stderr);
  const body = JSON.parse(set.stdout) as { instanceId: string; url: string; signed: boolean; secret: string };
  t.like(body, { instanceId: inst.id, url: receiver.url, signed: true });
  t.regex(body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  t.is(Buffer.from(body.secret.slice(6), 'base64').length, 32);

  // Never shown again.
  const shown = await runCli(['webhook', 'show', inst.id, '--json'], { dataDir: d.dataDir });
  t.false(shown.stdout.includes(body.secret));

  await inbound(d, inst, '+15550000001', 'signed with the generated secret');
  const [delivery] = await receiver.waitForCount(1, 5000);
  const event = new Webhook(body.secret).verify(delivery!.body, delivery!.headers) as { type: string };
  t.is(event.type, 'message.received');

  // Each run generates a new one; the human form says it is shown once.
  const human = await runCli(['webhook', 'set', inst.id, '--secret', 'generate'], { dataDir: d.dataDir });
  t.is(human.code, 0, human.stderr);
  const again = /^Signing secret \(shown once, give it to the receiver\): (whsec_\S+)$/m.exec(human.stdout)?.[1];
  t.truthy(again, human.stdout);
  t.not(again, body.secret);
});
