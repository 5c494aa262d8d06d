"""numpy arrays in guarded slots: numpy's data-allocation handler (NEP 49,
numpy >= 1.22) set to the guard's ("mate_guard"), through numpy's C-API
table (the `_ARRAY_API` capsule), so nothing is compiled against numpy.

Arrays made before the handler is set keep numpy's own memory: each
array frees through the handler capsule it was made with. numpy keeps its
handler in a context variable, and a new thread starts from the default
(the capsule numpy made at import): the handler is set in the installing
context, and Python's thread starts are wrapped so that every thread
started after install sets it first. The default capsule itself is pointed
at a counting copy of numpy's default handler (same name, numpy's own
functions): the arrays made before install are counted as they are freed,
and so are arrays made where the guard's handler is not set (a thread
started before install or from C), which stay numpy's."""

import contextvars
import ctypes
import importlib.abc
import sys

from . import _host

# Indexes in numpy's C-API table (numpy/__multiarray_api.h, stable since 1.22).
_SET_HANDLER = 304
_GET_HANDLER = 305
_CAPSULE_NAME = b'mem_handler'

_state = {'installed': False, 'error': None, 'previous': None, 'ours': None}


def _api_table(np):
    for name in ('numpy._core._multiarray_umath', 'numpy.core._multiarray_umath'):
        mod = sys.modules.get(name)
        if mod is not None and hasattr(mod, '_ARRAY_API'):
            return mod._ARRAY_API
    raise RuntimeError(f'numpy {np.__version__} has no _ARRAY_API capsule')


def install_now():
    """Sets the guard's handler in numpy (imported); True when it is set."""
    if _state['installed']:
        return True
    np = sys.modules['numpy']
    major, minor = (int(p) for p in np.__version__.split('.')[:2])
    if (major, minor) < (1, 22):
        _state['error'] = f'numpy {np.__version__} has no allocation handler (NEP 49 needs numpy >= 1.22)'
        return False
    api = ctypes.pythonapi
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_New.restype = ctypes.py_object
    api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    table = ctypes.cast(api.PyCapsule_GetPointer(_api_table(np), None), ctypes.POINTER(ctypes.c_void_p))
    get_handler = ctypes.PYFUNCTYPE(ctypes.py_object)(table[_GET_HANDLER])
    set_handler = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.py_object)(table[_SET_HANDLER])
    previous = get_handler()
    handler = _host.numpy_handler(api.PyCapsule_GetPointer(previous, _CAPSULE_NAME))
    ours = api.PyCapsule_New(handler, _CAPSULE_NAME, None)
    # The capsule a fresh context gets (numpy's PyDataMem_DefaultHandler),
    # pointed at the counting copy only after the guard's handler copied
    # what it pointed at.
    default = contextvars.Context().run(get_handler)
    counting = _host.numpy_counting_default(api.PyCapsule_GetPointer(default, _CAPSULE_NAME))
    if counting:
        api.PyCapsule_SetPointer.restype = ctypes.c_int
        api.PyCapsule_SetPointer.argtypes = [ctypes.py_object, ctypes.c_void_p]
        api.PyCapsule_SetPointer(default, counting)
    set_handler(ours)
    _wrap_thread_starts(set_handler, ours)
    # Kept alive for the process: arrays hold references to them too.
    _state.update(installed=True, previous=previous, ours=ours, default=default)
    return True


def _wrap_thread_starts(set_handler, ours):
    """Every thread started through Python (threading, concurrent.futures,
    _thread) sets the guard's handler in its own context before it runs."""
    import _thread
    import threading

    def wrap(start):
        if getattr(start, '_mate_guard_numpy', False):
            return start

        def start_guarded(function, *args, **kwargs):
            def run(*a, **kw):
                try:
                    set_handler(ours)
                except Exception:  # numpy being torn down: the thread runs unguarded, never broken
                    pass
                return function(*a, **kw)

            return start(run, *args, **kwargs)

        start_guarded._mate_guard_numpy = True
        return start_guarded

    # Where each Python version starts threads (3.13+: the joinable ones).
    for module, names in (
        (_thread, ('start_new_thread', 'start_new', 'start_joinable_thread')),
        (threading, ('_start_new_thread', '_start_joinable_thread')),
    ):
        for name in names:
            start = getattr(module, name, None)
            if start is not None:
                setattr(module, name, wrap(start))


class _AfterImport(importlib.abc.MetaPathFinder):
    """Sets the handler right after `import numpy` finishes (arrays numpy makes while importing stay its own)."""

    def find_spec(self, fullname, path, target=None):
        if fullname != 'numpy':
            return None
        sys.meta_path.remove(self)  # once: the other finders locate numpy
        import importlib.util

        spec = importlib.util.find_spec('numpy')
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_then_install(module):
            exec_module(module)
            try:
                install_now()
            except Exception as err:  # numpy works on, unguarded; said in the summary
                _state['error'] = f'numpy arrays are not guarded: {err}'

        loader.exec_module = exec_then_install
        return spec


def install():
    """Now when numpy is imported, else right after its import."""
    if 'numpy' in sys.modules:
        install_now()
    elif not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport())


def status():
    """'guarded', 'not imported', or why arrays are not guarded."""
    if _state['installed']:
        return 'guarded'
    return _state['error'] or 'not imported'
