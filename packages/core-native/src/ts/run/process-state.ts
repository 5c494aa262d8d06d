// A plugin's per-process state, kept on globalThis under a registered
// symbol, so that a test file that loads the package through another path
// (a second copy) sees the same decision.
export function processState<T>(name: string): { get(): T | undefined; set(state: T): void } {
  const key = Symbol.for(name);
  const holder = globalThis as unknown as Record<symbol, T | undefined>;
  return {
    get: () => holder[key],
    set: (state) => {
      holder[key] = state;
    },
  };
}
