// How Jest selects tests, for mate-jest's canary reruns and `mate replay`:
// the files as paths (--runTestsByPath: the user's patterns do not widen
// it), the tests by their full names (-t), the projects by name
// (--selectProjects=<name>, one each: a name is only ever an option's
// value) where the test paths name them.
import * as path from 'node:path';

import { runAsGiven, testNamePattern, testProjects, type RunnerAdapter } from '@mate-guard/core/internal';
import { options } from './runner/options';
import { jestOptionName, jestSpelling } from './spelling';

/** Options that pick tests or projects: the selection replaces them. */
const SELECTING = /^(-t|--testNamePattern|--selectProjects)(=|$)/;

export const selection: RunnerAdapter = {
  runner: 'jest',
  package: '@mate-guard/jest-env',
  // What a recorded run may have started: this package's CLI, or the runner with the plugin.
  programs: [
    { pkg: '@mate-guard/jest-env', bin: 'mate-jest' },
    { pkg: 'jest', bin: 'jest' },
  ],
  // Its README's settings table: where its config names each setting (`mate options --runner`).
  spelling: jestSpelling,
  // Run-wide settings are set before any file starts: Jest takes them as the reporter's options.
  configColumn: {
    heading: '`testEnvironmentOptions`',
    title: 'Jest `testEnvironmentOptions`',
    name: (r) => `\`${jestOptionName(r)}\`${r.runWide ? ' (reporter option)' : ''}`,
  },
  options,
  // -w is --maxWorkers in Jest, not watch mode.
  args: { watch: ['--watch', '--watchAll', '--watch-all'], watchWithValue: [], shard: ['--shard'] },
  select({ positionals, options, tail, files, tests, cwd }) {
    const names = testNamePattern(tests, (titles) => titles.join(' '));
    const projects = testProjects(tests);
    const kept = options.filter((o) => !SELECTING.test(o[0])).flat();
    return [
      ...positionals,
      ...files.map((f) => path.resolve(cwd, f)),
      ...kept,
      '--runTestsByPath',
      ...(names ? ['-t', names] : []),
      ...projects.map((p) => `--selectProjects=${p}`),
      ...tail,
    ];
  },
  whole: runAsGiven,
};

/** The runner contract this package implements for core (`mate replay` finds it by package.json's `mateGuard.runner`). */
export const adapter = selection;
