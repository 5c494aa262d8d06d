// How Mocha selects tests, for mate-mocha's canary reruns and `mate
// replay`: by their full titles (--grep). Spec files from the rc file add
// to positional ones, so files cannot narrow a run; a title can.
import { runAsGiven, testNamePattern, type RunnerAdapter } from '@mate-guard/core/internal';
import { options } from './runner/options';
import { mochaSpelling, rcKey } from './spelling';

/** The user's own selection by title: the rerun's replaces it. */
const GREP = /^(-g|--grep|-f|--fgrep|-i|--invert)(=|$)/;

export const selection: RunnerAdapter = {
  runner: 'mocha',
  package: '@mate-guard/mocha',
  // What a recorded run may have started: this package's CLI, or the runner with the plugin.
  programs: [
    { pkg: '@mate-guard/mocha', bin: 'mate-mocha' },
    // mocha's bin forks lib/cli/cli.js for node flags; _mocha is the older name of that script.
    { pkg: 'mocha', bin: 'mocha', also: /(^|[\\/])(_mocha|mocha[\\/]lib[\\/]cli[\\/]cli\.js)$/ },
  ],
  // Its README's settings table: where its config names each setting (`mate options --runner`).
  spelling: mochaSpelling,
  configColumn: {
    heading: 'rc key (`.mocharc.*`, package.json `mocha`)',
    title: 'Mocha rc key',
    name: (r) => `\`${rcKey(r)}\``,
  },
  options,
  // --watch-files/--watch-ignore only configure watch mode.
  args: { watch: ['-w', '--watch'], watchWithValue: [], shard: [] },
  select({ positionals, options, tail, tests }) {
    const names = testNamePattern(tests, (titles) => titles.join(' '));
    const kept = names ? options.filter((o) => !GREP.test(o[0])) : options;
    return [...positionals, ...kept.flat(), ...(names ? ['--grep', names] : []), ...tail];
  },
  whole: runAsGiven,
};

/** The runner contract this package implements for core (`mate replay` finds it by package.json's `mateGuard.runner`). */
export const adapter = selection;
