// The files a format or lint run covers, by language: the paths given on
// the command line (each tool's ignore list still applies), else every file
// of the repository its tool owns.
import fs from 'node:fs';
import path from 'node:path';
import { filesOf, isIgnored, languageOf, ROOT } from './files.mjs';

export function filesToDo(args) {
  const given = args.map((f) => {
    if (!fs.existsSync(f)) {
      console.error(`error: ${f}: no such file`);
      process.exit(2);
    }
    return path.relative(ROOT, path.resolve(f));
  });
  const of = (lang) =>
    given.length ? given.filter((f) => languageOf(f) === lang && !isIgnored(lang, f)) : filesOf(lang);
  return { cpp: of('cpp'), python: of('python'), js: of('js') };
}
