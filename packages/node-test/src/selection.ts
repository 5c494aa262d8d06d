// How node --test selects tests, for mate-node-test's canary reruns and
// `mate replay`: the files themselves (the user's file arguments dropped),
// the tests by their own names (--test-name-pattern). node reads its
// options before the first file.
import { NODE_ARGS, NODE_TEST_OPTIONS, testNamePattern, type RunnerAdapter } from '@mate-guard/core/internal';
import { options } from './runner/options';

const NAME_PATTERN = /^--test-name-pattern(=|$)/;

export const selection: RunnerAdapter = {
  runner: 'node-test',
  package: '@mate-guard/node-test',
  // What a recorded run may have started: this package's CLI, or the runner with the plugin.
  programs: [{ pkg: '@mate-guard/node-test', bin: 'mate-node-test' }],
  // `node --test --require @mate-guard/node-test files...`: node starts the run; its arguments are node's.
  nodeEntry: { flag: '--test', options: NODE_TEST_OPTIONS },
  options,
  args: NODE_ARGS,
  select({ options, files, tests }) {
    const names = testNamePattern(tests, (titles) => titles[titles.length - 1] ?? '');
    const kept = options.filter((o) => !NAME_PATTERN.test(o[0])).flat();
    return [...kept, ...(names ? [`--test-name-pattern=${names}`] : []), ...files];
  },
  whole: ({ positionals, options, tail }) => [...options.flat(), ...positionals, ...tail],
};

/** The runner contract this package implements for core (`mate replay` finds it by package.json's `mateGuard.runner`). */
export const adapter = selection;
