// mate-jest's own --help section; Jest's follows it.
import { describeRunnerFlags } from '@mate-guard/core/internal';

export function mateJestHelp(): string {
  return [
    'mate-jest: runs jest with mate-guard\'s guard flags; every other argument goes to jest unchanged.',
    '',
    'Usage: mate-jest [guard flags] [jest options] [testPathPattern]',
    '',
    'Guard flags (the test environment must be @mate-guard/jest-env):',
    ...describeRunnerFlags('jest'),
    '',
    'Precedence: flag > MATE_JEST_GUARD_* > testEnvironmentOptions (guardAlloc, guardMode,',
    'guardLogAllocations; per file through a @jest-environment-options docblock) > off.',
    '',
    'Jest options:',
    '',
  ].join('\n');
}
