// Mocha's command line as `mate replay` reads it (and mate-mocha's canary
// reruns): each option mocha takes, by what its value is. Replay builds
// every argument it passes from this; an option not here runs only under
// --trust-record. Mocha splits its array options on commas (`-n a,b` is
// two node options, a spec `a.js,b.js` two files): each element is judged
// alone and passed as its own option. Mocha hands node's options on.
import type { RunnerOptions } from '@mate-guard/core/internal';

export const options: RunnerOptions = {
  name: 'mocha argument',
  positional: 'spec',
  nodeOptions: true,
  debuggerWords: ['inspect'],
  // mocha's lib/cli/run-option-metadata.js: the array options, all comma-split.
  commaLists:
    '--extension --file --global --globals --ignore --exclude -n --node-option --reporter-option -O --reporter-options -r --require --spec spec --watch-files --watch-ignore',
  rows: [
    [
      'flag',
      `--allow-uncaught -A --async-only -b --bail --check-leaks -c --color --colors -C --no-colors --delay --diff --dry-run --exit
      --fail-zero --fail-hook-affected-tests --forbid-only --forbid-pending --full-trace --inline-diffs -i --invert -p --parallel
      --recursive -S --sort --posix-exit-codes --pass-on-failing-test-suite --clear-screen --no-config --no-package --no-opts`,
    ],
    [
      'value',
      `-g --grep -f --fgrep -t --timeout --timeouts -s --slow -j --jobs --retries --extension --ignore --exclude --global
      --globals --watch-files --watch-ignore`,
    ],
    ['module', '-r --require'],
    ['module', '-u --ui', 'bdd tdd qunit exports'],
    ['module', '-R --reporter', 'spec dot nyan tap landing list progress json json-stream min doc markdown xunit base'],
    ['file', '--config --package --file'],
    ['spec', '--spec'],
    ['node', '-n --node-option'],
  ],
};
