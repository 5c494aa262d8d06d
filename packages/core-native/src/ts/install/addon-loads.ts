// Work that must follow every addon load: the module map the fault handler
// reads (a report resolves a native frame to module + offset only if the map
// knew the module; the map is never built inside the handler), and the
// native-heap guard's bookkeeping. One wrapper around `process.dlopen` (the
// loader of every `.node` addon, `require` included) runs each listener after
// it. Objects loaded some other way (an addon's own dlopen, another thread's
// require) are caught by the next cheap refresh, e.g. at test start.
type Dlopen = typeof process.dlopen;
type Listener = () => void;

const listeners: Listener[] = [];
let original: Dlopen | undefined;

function hooked(this: unknown, ...args: Parameters<Dlopen>): void {
  try {
    Reflect.apply(original!, this, args);
  } finally {
    // A failed load may still have loaded dependencies.
    for (const l of listeners) l();
  }
}

/** Runs `listener` now and after every `process.dlopen`; returns the undo function. */
export function afterAddonLoads(listener: Listener): () => void {
  listener();
  listeners.push(listener);
  if (!original) {
    original = process.dlopen;
    process.dlopen = hooked as Dlopen;
  }
  return () => {
    const i = listeners.indexOf(listener);
    if (i >= 0) listeners.splice(i, 1);
    if (listeners.length === 0 && original && process.dlopen === (hooked as Dlopen)) {
      process.dlopen = original;
      original = undefined;
    }
  };
}
