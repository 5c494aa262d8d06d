// How Vitest selects tests, for mate-vitest's canary reruns and `mate
// replay`: one run (`vitest run`, never watch mode) of the files, the
// tests by their full names (-t), and only the projects the test paths
// name (--project=<name>, only ever an option's value): a file shared by projects reruns where it was damaged.
import { BY_KEY, testNamePattern, testProjects, type RunnerAdapter } from '@mate-guard/core/internal';
import { options } from './runner/options.mjs';

/** Vitest's commands among the positionals: the selection runs `run`. */
const COMMANDS = ['run', 'watch', 'dev'];
/** Options that pick tests or projects: the selection replaces them where it names its own. */
const NAMES = /^(-t|--testNamePattern)(=|$)/;
const PROJECT = /^--project(=|$)/;

export const selection: RunnerAdapter = {
  runner: 'vitest',
  package: '@mate-guard/vitest',
  // What a recorded run may have started: this package's CLI, or the runner with the plugin.
  programs: [
    { pkg: '@mate-guard/vitest', bin: 'mate-vitest' },
    { pkg: 'vitest', bin: 'vitest' },
  ],
  // Its README's settings table: where its config names each setting (`mate options --runner`).
  spelling: BY_KEY,
  configColumn: {
    heading: '`guardAlloc()` option',
    title: 'Vitest `guardAlloc()` option',
    name: (r) => `\`${r.key}\``,
  },
  options,
  args: { watch: ['-w', '--watch'], watchWithValue: [], shard: ['--shard'] },
  select({ options, tail, files, tests }) {
    const names = testNamePattern(tests, (titles) => titles.join(' '));
    const projects = testProjects(tests);
    const kept = options.filter((o) => !(names && NAMES.test(o[0])) && !(projects.length && PROJECT.test(o[0]))).flat();
    return [
      'run',
      ...files,
      ...kept,
      ...(names ? ['-t', names] : []),
      ...projects.map((p) => `--project=${p}`),
      ...tail,
    ];
  },
  whole: ({ positionals, options, tail }) => [
    'run',
    ...positionals.filter((a) => !COMMANDS.includes(a)),
    ...options.flat(),
    ...tail,
  ],
};

/** The runner contract this package implements for core (`mate replay` finds it by package.json's `mateGuard.runner`). */
export const adapter = selection;
