// This package's version, from its package.json (beside dist/): the `mate
// --version` line and the CI formats' tool version.
import * as fs from 'node:fs';
import * as path from 'node:path';

let version: string | undefined;

export function coreVersion(): string {
  version ??= (
    JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', 'package.json'), 'utf8')) as { version: string }
  ).version;
  return version;
}
