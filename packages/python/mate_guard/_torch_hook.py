"""mate-guard's CUDA device guard for PyTorch.

Every CUDA tensor allocation goes to libmate_guard_cuda.so through PyTorch's
public pluggable-allocator API, installed right after `import torch`, before
the first CUDA tensor. `Tensor.record_stream` is passed on to the guard (the
cross-stream-free check honours it), and graph capture is refused while
guarding is on. The library reads the run's settings from the handoff
(MATE_GUARD_SETTINGS) itself. Nothing here imports torch: programs that
never import it are untouched.

The one source of the hook: the npm core ships a copy made at build time
(packages/core-native/scripts/copy-python.js -> python/mate_guard_cuda.py),
which `mate guard-run --device cuda` loads without this package, so it
imports nothing of mate_guard. Importable by name here: a process that
receives a guarded CUDA tensor (torch.multiprocessing) unpickles references
to it.
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
        sys.stderr.write(
            f'[mate-guard] warning: CUDA guarding is off: {path or "MATE_GUARD_CUDA_LIBRARY unset"}: {err}\n'
        )
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
    _share_guarded_tensors(torch)
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


# CUDA IPC (torch.multiprocessing sharing a CUDA tensor). PyTorch gives
# pluggable allocators, which the guard is, no IPC, and legacy IPC handles
# (cudaIpcGetMemHandle) cannot name virtual-memory mappings: a guarded
# storage is shared as its physical chunk's file descriptor instead, sent
# as multiprocessing sends descriptors, and mapped by the receiver with its
# guard granule on the same side. The sender's free releases its chunk
# (never reused), and the receiver's mapping keeps the memory until the
# receiver's storage dies.
IPC_MESSAGE = (
    'mate-guard: this CUDA tensor cannot be shared with another process (CUDA IPC, as '
    'torch.multiprocessing does): {why}. Guard only the processes that do not share CUDA tensors, '
    'or share them through host memory (tensor.cpu()).'
)


class _SharedRange(ctypes.Structure):
    _fields_ = [
        ('fd', ctypes.c_int64),
        ('chunk_bytes', ctypes.c_uint64),
        ('offset', ctypes.c_uint64),
        ('size', ctypes.c_uint64),
        ('granule', ctypes.c_uint64),
        ('guard_before', ctypes.c_uint64),
    ]


class _SharedMapping(ctypes.Structure):
    _fields_ = [
        ('reserved', ctypes.c_uint64),
        ('reserved_bytes', ctypes.c_uint64),
        ('data', ctypes.c_uint64),
        ('chunk_bytes', ctypes.c_uint64),
    ]


_ipc_lib = None


def _ipc_library():
    """The guard's library with its IPC calls declared, once; also in a
    receiving process that guards nothing."""
    global _ipc_lib
    if _ipc_lib is None:
        lib = _library if _library is not None else ctypes.CDLL(_library_path())
        lib.mate_guard_ipc_export.argtypes = [ctypes.c_void_p, ctypes.POINTER(_SharedRange)]
        lib.mate_guard_ipc_map.argtypes = [ctypes.c_int, ctypes.POINTER(_SharedRange), ctypes.POINTER(_SharedMapping)]
        lib.mate_guard_ipc_unmap.argtypes = [ctypes.POINTER(_SharedMapping)]
        lib.mate_guard_ipc_error.restype = ctypes.c_char_p
        _ipc_lib = lib
    return _ipc_lib


class GuardedIpcHandle:
    """What a guarded storage is shared as, in place of PyTorch's
    cudaIpcMemHandle bytes: the chunk's descriptor and its layout."""

    def __init__(self, fd_holder, chunk_bytes, offset, granule, guard_before, owned_fd=None):
        self.fd_holder = fd_holder  # multiprocessing's DupFd, or the received descriptor
        self.layout = (chunk_bytes, offset, granule, guard_before)
        # A Process argument's descriptor is passed to the child at its
        # spawn, not duplicated when pickled: kept open until then.
        self._owned_fd = owned_fd

    def __reduce__(self):
        return (_received_handle, (self.fd_holder,) + self.layout)

    def close(self):
        if self._owned_fd is not None:
            os.close(self._owned_fd)
            self._owned_fd = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter teardown
            pass


def _received_handle(fd_holder, chunk_bytes, offset, granule, guard_before):
    # Unpickled in the receiver before torch's rebuild asks for the storage.
    import torch

    _rebuild_guarded_storages(torch)
    fd = fd_holder.detach()
    return GuardedIpcHandle(fd, chunk_bytes, offset, granule, guard_before, owned_fd=fd)


class _SharedMemory:
    """The receiver's mapping of a shared chunk, seen by torch as a CUDA
    array; unmapped when the storage built on it dies."""

    def __init__(self, torch, lib, mapping, ptr, nbytes, device):
        self._torch, self._lib, self._mapping, self._device = torch, lib, mapping, device
        self.__cuda_array_interface__ = {'shape': (nbytes,), 'typestr': '|u1', 'data': (ptr, False), 'version': 2}

    def __del__(self):
        try:
            self._torch.cuda.synchronize(self._device)  # work queued on the storage ends before its memory goes
        except Exception:
            pass
        self._lib.mate_guard_ipc_unmap(ctypes.byref(self._mapping))


def _share_guarded_tensors(torch):
    import multiprocessing.context
    import multiprocessing.reduction

    lib = _ipc_library()  # the installed library, its IPC calls declared (the error's text is a char*)
    original = torch.UntypedStorage._share_cuda_

    def _share_cuda_(self, *args, **kwargs):
        shared = _SharedRange()
        if lib.mate_guard_ipc_export(ctypes.c_void_p(self.data_ptr()), ctypes.byref(shared)) != 0:
            why = lib.mate_guard_ipc_error().decode(errors='replace')
            try:
                return original(self, *args, **kwargs)
            except RuntimeError as err:
                if 'shareIPcHandle' not in str(err) and 'shareIpcHandle' not in str(err):
                    raise
                if why == 'the pointer is not a guarded allocation':
                    why = (
                        'the guard did not allocate it (an unguarded fallback, or memory another process shared), '
                        "and PyTorch cannot share a pluggable allocator's memory"
                    )
                raise RuntimeError(IPC_MESSAGE.format(why=why)) from err
        # Sent now (queues, pipes: multiprocessing duplicates the descriptor
        # and we close ours), or at the spawn of the process it is an
        # argument of (kept open until the handle goes).
        spawning = multiprocessing.context.get_spawning_popen() is not None
        try:
            fd_holder = multiprocessing.reduction.DupFd(shared.fd)
        except BaseException:
            os.close(shared.fd)
            raise
        if not spawning:
            os.close(shared.fd)
        # What was queued on the tensor is in its memory before the receiver reads it.
        torch.cuda.current_stream(self.device).synchronize()
        handle = GuardedIpcHandle(
            fd_holder,
            shared.chunk_bytes,
            shared.offset,
            shared.granule,
            bool(shared.guard_before),
            owned_fd=shared.fd if spawning else None,
        )
        # PyTorch's tuple: device, handle, size, offset in the allocation, ref counter, event.
        return (self.device.index, handle, self.nbytes(), 0, b'', 0, b'', False)

    torch.UntypedStorage._share_cuda_ = _share_cuda_
    _rebuild_guarded_storages(torch)


def _rebuild_guarded_storages(torch):
    original = torch.UntypedStorage._new_shared_cuda
    if getattr(original, '_mate_guard', False):
        return

    def _new_shared_cuda(cls, device, handle, size_bytes, offset_bytes, *rest, **kwargs):
        if not isinstance(handle, GuardedIpcHandle):
            return original(device, handle, size_bytes, offset_bytes, *rest, **kwargs)
        lib = _ipc_library()
        chunk_bytes, offset, granule, guard_before = handle.layout
        shared = _SharedRange(handle.fd_holder, chunk_bytes, offset, 0, granule, int(guard_before))
        mapping = _SharedMapping()
        try:
            failed = lib.mate_guard_ipc_map(int(device), ctypes.byref(shared), ctypes.byref(mapping)) != 0
        finally:
            handle.close()  # the mapping holds the memory now
        if failed:
            why = lib.mate_guard_ipc_error().decode(errors='replace')
            raise RuntimeError(f'mate-guard: could not map a guarded CUDA tensor another process shared: {why}')
        memory = _SharedMemory(torch, lib, mapping, mapping.data + offset + offset_bytes, size_bytes, int(device))
        return torch.as_tensor(memory, device=torch.device('cuda', int(device))).untyped_storage()

    _new_shared_cuda._mate_guard = True
    torch.UntypedStorage._new_shared_cuda = classmethod(_new_shared_cuda)


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
