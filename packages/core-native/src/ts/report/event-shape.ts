// What a report file must look like before anything reads it. An event is
// data from wherever the run happened (a CI artifact): a wrong type
// (`test: 5`, `frames: "abc"`), nesting no writer makes, or a size no
// event reaches would crash the merge (a TypeError, a RangeError) and lose
// every other report. The reader checks the text and the shape first and
// names the file and the field; the file then counts as an unreadable
// report (exit 1), like one cut short. Fields are checked where present
// (older writers leave some out); `null` only where the writers write it.

/** A report file bigger than this is no event (they are kilobytes; a long stack list is well under a megabyte). */
export const MAX_EVENT_BYTES = 16 * 1024 * 1024;
/** Deeper than any event (a rerun's fault's allocation's stack frames is about 8). */
export const MAX_EVENT_DEPTH = 32;

/** The deepest `{`/`[` nesting of JSON text (strings skipped), stopping once past `limit`. */
export function jsonDepth(text: string, limit = MAX_EVENT_DEPTH): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max && (max = depth) > limit) return max;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

/** Why a value at `at` is not what it should be; undefined when it is. */
type Check = (v: unknown, at: string) => string | undefined;

const kind = (v: unknown): string =>
  v === null
    ? 'null'
    : Array.isArray(v)
      ? 'an array'
      : typeof v === 'object' || typeof v === 'undefined'
        ? `an ${typeof v}`
        : `a ${typeof v}`;
const is =
  (what: string, ok: (v: unknown) => boolean): Check =>
  (v, at) =>
    ok(v) ? undefined : `${at} is ${kind(v)}, not ${what}`;

const str = is('a string', (v) => typeof v === 'string');
const num = is('a number', (v) => typeof v === 'number' && Number.isFinite(v));
const bool = is('a boolean', (v) => typeof v === 'boolean');
/** An address: a hex string, or a number from an older writer. */
const addr = is('an address', (v) => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)));
const orNull =
  (c: Check): Check =>
  (v, at) =>
    v === null ? undefined : c(v, at);

/** An object whose listed fields, where present, pass their checks (other fields are left alone). */
const obj =
  (fields: Record<string, Check>): Check =>
  (v, at) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return `${at} is ${kind(v)}, not an object`;
    for (const [k, check] of Object.entries(fields)) {
      if (!Object.hasOwn(v, k) || (v as Record<string, unknown>)[k] === undefined) continue;
      const why = check((v as Record<string, unknown>)[k], `${at}.${k}`);
      if (why) return why;
    }
    return undefined;
  };

const arr =
  (item: Check): Check =>
  (v, at) => {
    if (!Array.isArray(v)) return `${at} is ${kind(v)}, not an array`;
    for (let i = 0; i < v.length; i++) {
      const why = item(v[i], `${at}[${i}]`);
      if (why) return why;
    }
    return undefined;
  };

const pair = arr(addr);
const frame = obj({
  module: orNull(str),
  offset: num,
  pc: addr,
  function: orNull(str),
  file: orNull(str),
  line: orNull(num),
});
const stack = obj({ unwind: str, frames: arr(frame) });
const side = obj({ bytes: num, nearest: num, farthest: num });

const allocation = obj({
  id: num,
  size: num,
  start: addr,
  end: addr,
  mode: str,
  alignment: num,
  backend: str,
  guardMethod: str,
  slot: obj({ data: pair, guard: pair, canaryBefore: pair, canaryAfter: pair }),
  allocTest: orNull(str),
  allocStack: orNull(str),
  allocFrames: orNull(stack),
  freed: bool,
  freedBy: orNull(str),
  freeTest: orNull(str),
  freeStack: orNull(str),
  freeFrames: orNull(stack),
});

const launch = obj({
  number: num,
  kernel: orNull(str),
  stream: addr,
  site: orNull(str),
  test: orNull(str),
  faulted: bool,
  argCount: num,
  args: arr(obj({ param: num, offset: num, paramSize: num, value: addr, allocation })),
  inputs: arr(obj({ param: num, allocation: num, size: num, saved: num, file: str })),
});

const death = obj({
  signal: num,
  code: num,
  sender: orNull(num),
  address: orNull(addr),
  access: orNull(str),
  abortMessage: orNull(str),
  exception: orNull(obj({ type: str, what: orNull(str) })),
  guardedFree: orNull(obj({ function: str, frame: num, pointer: addr })),
  misaligned: orNull(obj({ instruction: str, address: addr, alignment: num })),
});

/** Everything but the rerun's events, which are events themselves. */
const eventFields: Record<string, Check> = {
  tool: str,
  version: num,
  kind: str,
  access: orNull(str),
  address: orNull(addr),
  relation: orNull(str),
  distance: orNull(num),
  fatal: bool,
  signal: orNull(num),
  pid: num,
  test: orNull(str),
  runtime: orNull(str),
  machineryDirs: arr(str),
  machineryPackages: arr(str),
  accessStack: orNull(stack),
  damage: orNull(obj({ before: side, after: side })),
  backend: str,
  allocation: orNull(allocation),
  device: obj({
    api: str,
    ordinal: num,
    granule: num,
    error: orNull(str),
    errorText: orNull(str),
    foundBy: orNull(str),
    rank: orNull(num),
    localRank: orNull(num),
    worldSize: orNull(num),
  }),
  candidates: obj({ liveTotal: num, live: arr(allocation), freed: arr(allocation) }),
  launches: obj({ tracking: bool, off: orNull(str), blocking: bool, total: num, list: arr(launch) }),
  memory: obj(
    Object.fromEntries(
      [
        'requested',
        'liveCount',
        'liveBytes',
        'liveMapped',
        'quarantinedCount',
        'quarantinedBytes',
        'pendingBytes',
        'pooledBytes',
        'readyBytes',
        'givenBack',
        'deviceTotal',
        'deviceFree',
        'failures',
      ].map((k) => [k, num]),
    ),
  ),
  streams: obj({ free: addr, use: addr, useLaunch: orNull(launch) }),
  death,
  process: obj({ allocations: num, peakLive: num, fallbacks: num, nativeAllocations: num, nativeUnguarded: num }),
  delivered: str,
  text: str,
  nativeHeap: obj({ globs: arr(str), modules: arr(str) }),
};
const event: Check = (v, at) =>
  obj({
    ...eventFields,
    rerun: obj({
      mode: str,
      alignment: num,
      nativeExactSize: num,
      fault: orNull(event),
      death: orNull(event),
      ranNoTest: bool,
    }),
  })(v, at);

/** Why a parsed event is not one (naming the field: `test is a number, not a string`); undefined when it is. */
export function eventShapeWhy(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return `not a mate-guard report (${kind(value)})`;
  const e = value as Record<string, unknown>;
  if (e.tool !== 'mate-guard' || typeof e.kind !== 'string') return 'not a mate-guard report (no tool and kind)';
  const why = event(value, 'event');
  return why && why.replace(/^event\./, '');
}

/** Counters read as records of counts (a reason or kind each). */
const COUNT_RECORDS = ['fallbackReasons', 'nativeUnguardedBy', 'passThrough'];

/** Why a counters file's content is not one; undefined when it is. */
export function countersShapeWhy(value: unknown): string | undefined {
  if (
    typeof value !== 'object' ||
    value === null ||
    Array.isArray(value) ||
    typeof (value as { pid?: unknown }).pid !== 'number'
  )
    return 'not a counters file (no pid)';
  for (const [k, x] of Object.entries(value)) {
    if (COUNT_RECORDS.includes(k)) {
      if (typeof x !== 'object' || x === null || Array.isArray(x)) return `${k} is ${kind(x)}, not a record of counts`;
      for (const [r, n] of Object.entries(x))
        if (typeof n !== 'number' || !Number.isFinite(n)) return `${k}.${r} is ${kind(n)}, not a number`;
    } else if (typeof x === 'number' && !Number.isFinite(x)) return `${k} is not a finite number`;
    // Every other counter the summary adds up is a number where present.
    else if (typeof x === 'string' && !['fallbackReason', 'guardMethod'].includes(k))
      return `${k} is a string, not a number`;
  }
  return undefined;
}
