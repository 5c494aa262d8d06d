// Every guarded allocation records its JS stack, and in a Jest process the
// stack text goes through Jest's source-map formatter (plus Babel's), which
// costs a few hundred microseconds per stack: most of a guarded suite's
// overhead. The same frames always format to the same text within one test
// file (one set of source maps), so the formatter is memoized on the raw
// frames. Outside watch mode no file changes during the run, so the cache is
// kept for the worker's later files as long as the formatter is the same
// one (Jest's is one object per process): most stacks are Jest's own.
import * as path from 'node:path';

type Format = (error: unknown, frames: NodeJS.CallSite[]) => unknown;

// core's allocation-stack capture starts below its own frames; any that
// remain at the top (an entry point it did not name) are dropped before
// formatting. That keeps them out of reports (Jest's formatter rewrites
// core's paths to src/ts) and spares parsing core's source maps.
const CORE_DIR = path.dirname(require.resolve('@mate-guard/core')) + path.sep;

function withoutLeadingCoreFrames(error: unknown, frames: NodeJS.CallSite[]): NodeJS.CallSite[] {
  if (error instanceof Error) return frames; // a real error keeps its whole stack
  let i = 0;
  while (i < frames.length && (frames[i].getFileName() ?? '').startsWith(CORE_DIR)) i++;
  return i === 0 ? frames : frames.slice(i);
}

const LIMIT = 10_000;

// Everything a formatter prints for a frame, except the method name: V8
// finds that by searching the receiver (slow), and it only differs from the
// function name for functions stored under another property name.
function frameKey(f: NodeJS.CallSite): string {
  let typeName: string | null = null;
  try {
    typeName = f.getTypeName(); // throws for some strict-mode receivers
  } catch {
    // part of the key either way
  }
  const evalOrigin = f.isEval() ? f.getEvalOrigin() : '';
  return (
    `${f.getFileName()}:${f.getLineNumber()}:${f.getColumnNumber()}:${f.getFunctionName()}:${typeName}:` +
    `${+f.isConstructor()}${+f.isNative()}${+f.isToplevel()}${+(f.isAsync?.() ?? 0)}${+(f.isPromiseAll?.() ?? 0)}${evalOrigin}`
  );
}

function errorKey(error: unknown): string {
  if (error === null || typeof error !== 'object') return `${typeof error}:${String(error)}`;
  const e = error as { name?: unknown; message?: unknown };
  return `${Object.prototype.toString.call(error)}:${String(e.name)}:${String(e.message)}`;
}

interface StackFormatCache {
  /** Wraps the realm's current formatter (Jest installs its own per file). */
  ensure(): void;
  /** Puts back the formatter it wrapped, if nobody replaced it meanwhile. */
  release(): void;
}

// Shared by the files of one process (the formatter it belongs to, its text).
let shared: { inner: Format; cache: Map<string, unknown> } | undefined;

/** `acrossFiles`: keep what was formatted for the next file (not in watch mode). */
export function stackFormatCache(acrossFiles: boolean): StackFormatCache {
  let cache = new Map<string, unknown>();
  let wrapped: Format | undefined;
  let memo: Format | undefined;
  return {
    ensure() {
      const current = Error.prepareStackTrace as Format | undefined;
      if (!current || current === memo) return;
      const inner = current;
      if (acrossFiles) {
        if (shared?.inner !== inner) shared = { inner, cache: new Map() }; // another formatter may map differently
        cache = shared.cache;
      } else {
        cache = new Map();
      }
      wrapped = inner;
      memo = function prepareStackTrace(error, allFrames) {
        const frames = withoutLeadingCoreFrames(error, allFrames);
        let key: string;
        try {
          key = errorKey(error) + '\u0002' + frames.map(frameKey).join('\u0002');
        } catch {
          return inner(error, frames);
        }
        if (cache.has(key)) return cache.get(key);
        const text = inner(error, frames);
        if (typeof text !== 'string') return text; // not plain text: don't second-guess it
        if (cache.size >= LIMIT) cache.clear();
        cache.set(key, text);
        return text;
      };
      Error.prepareStackTrace = memo as typeof Error.prepareStackTrace;
    },
    release() {
      if (memo && Error.prepareStackTrace === memo) Error.prepareStackTrace = wrapped as typeof Error.prepareStackTrace;
      memo = wrapped = undefined;
    },
  };
}
