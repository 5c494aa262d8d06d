// @mate-guard/node-test: `node --test --import @mate-guard/node-test` (or
// --require) backs the tests' buffers with guard pages in every test
// file's process. Loading it makes guarding available;
// MATE_NODE_TEST_GUARD_* (or mate-node-test's flags) turn it on.
import { exitOnConfigError, GuardConfigError } from '@mate-guard/core/internal';

import { start } from './hooks/start';

function startOrExplain(): void {
  try {
    start();
  } catch (err) {
    if (!(err instanceof GuardConfigError)) throw err;
    // A bad variable: stop before any test file runs, with one line.
    exitOnConfigError('mate-guard', err);
  }
}
startOrExplain();

export { guardIncompatible, graphCapture, type TestOptions } from './hooks/tags';
