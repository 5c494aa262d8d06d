// node --test's command line as `mate replay` reads it (and
// mate-node-test's canary reruns): node's own options, which core
// describes (it judges every runner's node options), then test files.
export { NODE_TEST_OPTIONS as options } from '@mate-guard/core/internal';
