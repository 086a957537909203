import test from 'ava';
import { isLoopbackAddress, metricsAllowed } from '../../src/metrics/guard.js';

test('loopback addresses are recognised in every form Node reports', (t) => {
  for (const a of ['127.0.0.1', '127.1.2.3', '127.255.255.254', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '::FFFF:127.9.9.9', '0:0:0:0:0:ffff:127.0.0.1', '::ffff:7f00:1', '::1%lo']) {
    t.true(isLoopbackAddress(a), a);
  }
});

test('other addresses are not loopback', (t) => {
  for (const a of [undefined, '', '10.0.0.1', '192.168.1.5', '128.0.0.1', '1.127.0.0', '::2', '::', '::ffff:10.0.0.1', '::ffff:8.8.8.8', '::ffff:800:1', 'fe80::1', '2001:db8::1', 'localhost', '127.0.0.1.evil', '127.0.0.256']) {
    t.false(isLoopbackAddress(a), String(a));
  }
});

test('metricsAllowed follows the mode', (t) => {
  t.false(metricsAllowed('off', '127.0.0.1'));
  t.true(metricsAllowed('local', '127.0.0.1'));
  t.true(metricsAllowed('local', '::1'));
  t.false(metricsAllowed('local', '203.0.113.7'));
  t.false(metricsAllowed('local', undefined));
  t.true(metricsAllowed('public', '203.0.113.7'));
  t.true(metricsAllowed('public', '127.0.0.1'));
});
