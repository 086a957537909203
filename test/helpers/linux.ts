import test from 'ava';

const onLinux = process.platform === 'linux' || process.env.CI === 'true';

/**
 * `test` (and `test.serial`) for tests that read /proc (threads, their priorities). Off Linux they
 * are skipped; in CI (CI=true, always Linux here) they run and fail, never pass silently.
 */
export const linuxTest = onLinux ? test : test.skip;
export const linuxSerialTest = onLinux ? test.serial : test.skip;
