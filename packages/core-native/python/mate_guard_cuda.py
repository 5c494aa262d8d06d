"""mate-guard's CUDA device guard for PyTorch.

Every CUDA tensor allocation goes to libmate_guard_cuda.so through PyTorch's
public pluggable-allocator API, installed right after `import torch`, before
the first CUDA tensor. `Tensor.record_stream` is passed on to the guard (the
cross-stream-free check honours it), and graph capture is refused while
guarding is on. The library reads the run's settings from the handoff
(MATE_GUARD_SETTINGS) itself. Nothing here imports torch: programs that
never import it are untouched.
"""
import atexit
import ctypes
import glob
import importlib.abc
import os
import sys

GRAPH_CAPTURE_MESSAGE = 'guard allocator debug mode does not support graph capture'
_library = None


def _library_path():
    # A process-level path guard-run sets (not a setting).
    return os.environ.get('MATE_GUARD_CUDA_LIBRARY', '')


def _preload_cupti():
    """Launch tracking uses CUPTI; PyTorch's CUDA wheels ship it (nvidia/*/lib).
    Loaded once by its soname, the guard's dlopen finds it."""
    for base in sys.path:
        for lib in sorted(glob.glob(os.path.join(base, 'nvidia', '*', 'lib', 'libcupti.so*'))):
            try:
                ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
                return
            except OSError:
                continue


def install(torch):
    """Routes torch's CUDA allocations to the guard. True when it did."""
    global _library
    if _library is not None:
        return True
    path = _library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as err:
        sys.stderr.write(f'[mate-guard] warning: CUDA guarding is off: {path or "MATE_GUARD_CUDA_LIBRARY unset"}: {err}\n')
        return False
    _preload_cupti()
    lib.mate_guard_install_error.restype = ctypes.c_char_p
    if lib.mate_guard_install_from_env() != 0:
        why = lib.mate_guard_install_error().decode(errors='replace')
        sys.stderr.write(f'[mate-guard] warning: CUDA guarding is off: {why}\n')
        return False
    allocator = torch.cuda.memory.CUDAPluggableAllocator(path, 'mate_guard_torch_alloc', 'mate_guard_torch_free')
    torch.cuda.memory.change_current_allocator(allocator)
    _library = lib
    # Before the interpreter tears down (and before the driver's own exit
    # handlers): stop the background thread, finish pending checks.
    atexit.register(lib.mate_guard_shutdown)
    _honour_record_stream(torch, lib)
    _refuse_graph_capture(torch)
    _explain_ipc(torch)
    return True


def _honour_record_stream(torch, lib):
    """The pluggable allocator gets no record_stream call: pass it on."""
    lib.mate_guard_torch_record_stream.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    original = torch.Tensor.record_stream

    def record_stream(self, stream):
        original(self, stream)
        if self.is_cuda:
            lib.mate_guard_torch_record_stream(ctypes.c_void_p(self.data_ptr()), ctypes.c_void_p(stream.cuda_stream))

    torch.Tensor.record_stream = record_stream


def _refuse_graph_capture(torch):
    def capture_begin(self, *args, **kwargs):
        raise RuntimeError(GRAPH_CAPTURE_MESSAGE)

    torch.cuda.graphs.CUDAGraph.capture_begin = capture_begin


IPC_MESSAGE = (
    'mate-guard: a guarded CUDA tensor cannot be shared with another process (CUDA IPC, as '
    'torch.multiprocessing does): PyTorch gives pluggable allocators, which the device guard is, no IPC '
    '(CUDAPluggableAllocator::shareIpcHandle). Guard only the processes that do not share CUDA tensors, '
    'or share them through host memory (tensor.cpu()).'
)


def _explain_ipc(torch):
    """PyTorch's own error names no cause a user can act on: say why, in the sharing process."""
    original = torch.UntypedStorage._share_cuda_

    def _share_cuda_(self, *args, **kwargs):
        try:
            return original(self, *args, **kwargs)
        except RuntimeError as err:
            if 'shareIPcHandle' not in str(err) and 'shareIpcHandle' not in str(err):
                raise
            raise RuntimeError(IPC_MESSAGE) from err

    torch.UntypedStorage._share_cuda_ = _share_cuda_


class _TorchLoader(importlib.abc.Loader):
    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):  # resource readers, get_code, ...
        return getattr(self._inner, name)

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        self._inner.exec_module(module)
        install(module)


class _TorchFinder(importlib.abc.MetaPathFinder):
    """Finds torch with the other finders and installs the guard once its
    import has finished."""

    def find_spec(self, name, path=None, target=None):
        if name != 'torch':
            return None
        sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find = getattr(finder, 'find_spec', None)
            spec = find(name, path, target) if find else None
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, 'exec_module'):
                    spec.loader = _TorchLoader(spec.loader)
                return spec
        return None


def install_import_hook():
    if 'torch' in sys.modules:
        install(sys.modules['torch'])
    elif not any(isinstance(f, _TorchFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _TorchFinder())
