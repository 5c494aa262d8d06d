"""numpy arrays in guarded slots: numpy's data-allocation handler (NEP 49,
numpy >= 1.22) set to the guard's ("mate_guard"), through numpy's C-API
table (the `_ARRAY_API` capsule), so nothing is compiled against numpy.

Arrays made before the handler is set keep numpy's own handler (each
array frees through the handler it was made with): they are left alone.
numpy keeps its handler in a context variable: the handler is set in the
context that installs it (the main thread's, for pytest and scripts);
threads started later begin with numpy's default handler and are not
guarded."""
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
    set_handler(ours)
    # Both kept alive for the process: arrays hold references to them too.
    _state.update(installed=True, previous=previous, ours=ours)
    return True


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
