// Keeps the native module map current as addons load: a fault report can
// resolve a native frame to module + offset only if the map knew the module
// when the fault happened, and the map is never built inside the handler.
import type { NativeBinding } from './native';

type Dlopen = typeof process.dlopen;

let hooked: { undo: () => void } | undefined;

/**
 * Refreshes the module map after every `process.dlopen` of this thread (the
 * loader of every `.node` addon, `require` included) and once now. Returns
 * the undo function. Objects loaded some other way (an addon's own dlopen,
 * another thread's require) are caught by the next cheap refresh, e.g. at
 * test start.
 */
export function refreshModuleMapOnAddonLoad(native: Pick<NativeBinding, 'refreshModuleMap'>): () => void {
  native.refreshModuleMap();
  if (hooked) return hooked.undo;
  const original: Dlopen = process.dlopen;
  const dlopen = function dlopen(this: unknown, ...args: Parameters<Dlopen>): void {
    try {
      original.apply(this, args);
    } finally {
      native.refreshModuleMap(); // a failed load may still have loaded dependencies
    }
  };
  process.dlopen = dlopen;
  const undo = (): void => {
    if (process.dlopen === dlopen) process.dlopen = original;
    hooked = undefined;
  };
  hooked = { undo };
  return undo;
}
