// @mate-guard/node-test: `node --test --import @mate-guard/node-test` (or
// --require) backs the tests' buffers with guard pages in every test
// file's process. Loading it makes guarding available;
// MATE_NODE_TEST_GUARD_* (or mate-node-test's flags) turn it on.
import { orExitOnConfigError } from '@mate-guard/core/internal';

import { start } from './hooks/start';

// A bad variable: stop before any test file runs, with one line.
orExitOnConfigError('mate-guard', start);

export { guardIncompatible, graphCapture, type TestOptions } from './hooks/tags';
