// The few parts of Mocha's objects the plugin touches, typed structurally so
// that no @types/mocha is needed and every Mocha >= 10 fits.

/** A test body: sync, promise-returning, or callback style (`done`). */
export type TestFn = (this: MochaContext, done?: (err?: unknown) => void) => unknown;

export interface MochaSuite {
  title: string;
  pending: boolean;
  tests: MochaTest[];
  suites: MochaSuite[];
  parent?: MochaSuite;
  file?: string;
}

export interface MochaTest {
  type: 'test';
  title: string;
  pending: boolean;
  fn?: TestFn;
  file?: string;
  parent?: MochaSuite;
  titlePath(): string[];
}

/** `this` inside hooks and tests. */
export interface MochaContext {
  currentTest?: MochaTest;
}

/** What a root-hook plugin exports as `mochaHooks`. */
export interface RootHooks {
  beforeAll?: Array<(this: MochaContext) => void>;
  beforeEach?: Array<(this: MochaContext) => void>;
  afterEach?: Array<(this: MochaContext) => void>;
  afterAll?: Array<(this: MochaContext) => void>;
}

export function isMochaTest(value: unknown): value is MochaTest {
  const v = value as Partial<MochaTest> | null;
  return typeof v === 'object' && v !== null && v.type === 'test' && typeof v.title === 'string';
}

export function isMochaSuite(value: unknown): value is MochaSuite {
  const v = value as Partial<MochaSuite> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.title === 'string' &&
    Array.isArray(v.tests) &&
    Array.isArray(v.suites)
  );
}
