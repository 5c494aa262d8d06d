"""The host guard through the same library (libmate_guard_cuda.so):
guarded slots for numpy arrays (_numpy.py) and for the native heap of
chosen extension modules, the fault handler, canary checks and counters.
Reports are filed in the report directory like the device guard's, so one
reader (_library.Library.new_events) collects both."""

import ctypes
import json


_lib = None  # the CDLL, once the host guard is on
# Where reports are printed (None: stderr). pytest captures fd 2 while a
# test runs, and a process dying in a test would take the report with it:
# the plugin gives a copy of the terminal's stderr.
report_fd = None
# Every glob whose native heap this process guards: the config's and guard_native_modules()'s, in order.
_native_globs: list[str] = []


def _bind(lib):
    lib.mate_guard_host_install.argtypes = [ctypes.c_char_p, ctypes.c_int]
    lib.mate_guard_host_error.restype = ctypes.c_char_p
    lib.mate_guard_host_guard_native.argtypes = [ctypes.c_char_p]
    lib.mate_guard_host_set_current_test.argtypes = [ctypes.c_char_p]
    lib.mate_guard_host_set_fault_note.argtypes = [ctypes.c_char_p]
    lib.mate_guard_host_set_fault_continuation.argtypes = [
        ctypes.POINTER(ctypes.c_char_p),
        ctypes.POINTER(ctypes.c_char_p),
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_int,
    ]
    lib.mate_guard_host_check.argtypes = [ctypes.c_int]
    lib.mate_guard_host_stats_json.restype = ctypes.c_char_p
    lib.mate_guard_cuda_missing.restype = ctypes.c_char_p
    lib.mate_guard_numpy_handler.argtypes = [ctypes.c_void_p]
    lib.mate_guard_numpy_handler.restype = ctypes.c_void_p
    lib.mate_guard_numpy_counting_default.argtypes = [ctypes.c_void_p]
    lib.mate_guard_numpy_counting_default.restype = ctypes.c_void_p


def cuda_missing(lib):
    """Why this machine cannot guard device memory ('' when it can)."""
    _bind(lib.lib)
    return lib.lib.mate_guard_cuda_missing().decode(errors='replace')


def install(lib, handoff):
    """Turns the host guard on with `handoff`'s settings; RuntimeError with the library's reason when it cannot."""
    global _lib
    _bind(lib.lib)
    fd = -1 if report_fd is None else report_fd
    if lib.lib.mate_guard_host_install(json.dumps(handoff).encode(), fd) != 0:
        why = lib.lib.mate_guard_host_error().decode(errors='replace')
        raise RuntimeError(f'mate-guard: host memory guarding could not start: {why}')
    _lib = lib.lib
    globs = handoff['settings'].get('nativeModules') or []
    if globs:
        guard_native(globs)


def active():
    return _lib is not None


def guard_native(globs):
    """Guards the native heap (malloc, free, new, delete, ...) of loaded and later-loaded modules matching `globs`."""
    if _lib is None:
        raise RuntimeError('mate-guard: the guard allocator is not installed')
    if isinstance(globs, str):
        globs = [globs]
    if not all(isinstance(g, str) and g and '\n' not in g for g in globs):
        raise ValueError(f'guard_native takes globs (non-empty strings), not {globs!r}')
    if _lib.mate_guard_host_guard_native('\n'.join(globs).encode()) != 0:
        raise RuntimeError(f'mate-guard: {_lib.mate_guard_host_error().decode(errors="replace")}')
    _native_globs.extend(g for g in dict.fromkeys(globs) if g not in _native_globs)


def native_globs() -> list[str]:
    """The globs whose native heap is guarded here (at install and by guard_native_modules since)."""
    return list(_native_globs)


def set_current_test(name):
    if _lib is not None:
        _lib.mate_guard_host_set_current_test((name or '').encode())


def set_fault_note(line):
    """A line printed after the report of a fault on guarded memory, before the process dies ('' for none)."""
    if _lib is not None:
        _lib.mate_guard_host_set_fault_note(line.encode())


def keep_fault_handler_first():
    """The guard's fault handler in front of any installed since (pytest's faulthandler)."""
    if _lib is not None:
        _lib.mate_guard_host_keep_fault_handler_first()


def set_fault_continuation(argv, envp, std_fds):
    """After a fault's report (and note), the program `argv` (bytes) with `envp` replaces the dying process,
    descriptors 0-2 put back to `std_fds` first; an empty `argv` turns it off (_continuation.py)."""
    if _lib is None:
        return

    def array(items):
        arr = (ctypes.c_char_p * (len(items) + 1))(*items, None)
        return ctypes.cast(arr, ctypes.POINTER(ctypes.c_char_p))

    _lib.mate_guard_host_set_fault_continuation(array(argv), array(envp), *std_fds)


def check(all_live=False):
    """Files the host violations found now (canaries, bad native frees); how many."""
    return _lib.mate_guard_host_check(1 if all_live else 0) if _lib is not None else 0


def stats():
    """Host counters (allocations, numpy, native heap, violations); None when off."""
    if _lib is None:
        return None
    raw = _lib.mate_guard_host_stats_json().decode()
    return json.loads(raw) if raw else None


def numpy_handler(previous):
    """The guard's PyDataMem_Handler (its address), remembering numpy's `previous` one for blocks not guarded."""
    return _lib.mate_guard_numpy_handler(previous)


def numpy_counting_default(numpy_default):
    """What numpy's default handler capsule is to point at: a copy of `numpy_default` that counts (None: it is the guard's already)."""
    return _lib.mate_guard_numpy_counting_default(numpy_default)
