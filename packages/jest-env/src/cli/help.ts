// mate-jest's own --help section; Jest's follows it.
import { describeRunnerFlags } from '@mate-guard/core/internal';

export function mateJestHelp(): string {
  return [
    "mate-jest: runs jest with mate-guard's guard flags; every other argument goes to jest unchanged.",
    '',
    'Usage: mate-jest [guard flags] [jest options] [testPathPattern]',
    '',
    'Guard flags (mate-jest supplies @mate-guard/jest-env, wrapping the configured environment, where the config names none of ours):',
    ...describeRunnerFlags('jest'),
    '',
    'Precedence: flag > MATE_JEST_GUARD_* > testEnvironmentOptions (guardAlloc, guardMode,',
    'guardLogAllocations; per file through a @jest-environment-options docblock) > off.',
    '',
    'Jest options:',
    '',
  ].join('\n');
}
