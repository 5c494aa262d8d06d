"""mate-guard for Python: every guarded allocation sits against an
inaccessible guard page with canary slack on the other side, so an overrun
faults or is caught at free. Host memory everywhere (numpy arrays through
numpy's allocation handler, the native heap of chosen extension modules
with `native_modules`), CUDA device memory where there is a GPU.

    from mate_guard import GuardAllocatorConfig, install_guard_allocator
    install_guard_allocator(GuardAllocatorConfig(mode='tail', sync_on_free=True))

Install before the first CUDA allocation. numpy arrays made from then on
are guarded (numpy imported now or later). PyTorch's tensors are routed to
the guard when torch is importable (now, or at its import); processes
that allocate through the C ABI (mate_guard.h) are guarded either way.
`pytest --guard-alloc` and `python -m mate_guard script.py` do this for you.
"""
import atexit
import importlib.util
import sys

from . import _host, _library, _numpy
from ._config import GuardAllocatorConfig
from ._report import Report, render
from ._settings import GuardConfigError

__all__ = ['GuardAllocatorConfig', 'GuardConfigError', 'Report', 'check_canaries', 'guard_native_modules',
           'install_guard_allocator', 'is_guard_allocator_active', 'stats']

ALREADY_ACTIVE = 'Guard allocator is already active with a different configuration'
TOO_LATE = 'Guard allocator must be installed before the first CUDA allocation in the process'

_active = None  # the GuardAllocatorConfig installed
_device_off = None  # why device memory is not guarded (no CUDA driver here), or None


def _cuda_used():
    """True when torch has already set up CUDA (its allocator is fixed from then on)."""
    torch = sys.modules.get('torch')
    if torch is None:
        return False
    try:
        return bool(torch.cuda.is_initialized() or torch.cuda.memory_allocated() > 0)
    except Exception:  # a torch without CUDA: nothing allocated
        return False


def _load_torch_hook():
    from . import _torch_hook
    return _torch_hook


def install_guard_allocator(config=None):
    """Guards this process's CUDA allocations with `config` (defaults when None).

    Again with an equal config: nothing to do. With another: RuntimeError
    (the allocator of a process is chosen once). After a CUDA allocation:
    RuntimeError. A bad setting: GuardConfigError naming it.
    """
    global _active, _device_off
    if config is None:
        config = GuardAllocatorConfig()
    if not isinstance(config, GuardAllocatorConfig):
        raise TypeError(f'install_guard_allocator takes a GuardAllocatorConfig, not {type(config).__name__}')
    if _active is not None:
        if config == _active:
            return
        raise RuntimeError(ALREADY_ACTIVE)
    if _cuda_used():
        raise RuntimeError(TOO_LATE)
    lib = _library.load()
    handoff = config.to_handoff()
    # Host memory everywhere; device memory where a CUDA driver is.
    _host.install(lib, handoff)
    _numpy.install()
    missing = _host.cuda_missing(lib)
    if missing:
        _device_off = missing
        lib.watch_reports(handoff)
        atexit.register(_host_exit_check)
        _active = config
        return
    lib.install(handoff)
    atexit.register(_host_exit_check)  # registered after the device's shutdown: runs before it
    _active = config
    # PyTorch's allocations, when torch is there: now if imported, else at its import.
    if 'torch' in sys.modules or importlib.util.find_spec('torch') is not None:
        _load_torch_hook().install_import_hook()


def _host_exit_check():
    """At exit, damage still unreported (blocks freed since the last check, live ones): filed and printed."""
    _host.check(all_live=True)


def device_guarded():
    """True when CUDA device memory is guarded in this process."""
    return _active is not None and _device_off is None


def guard_native_modules(globs):
    """Guards the native heap of loaded and later-loaded modules whose path or file name matches `globs`
    (e.g. '*_myext*.so'); needs install_guard_allocator first."""
    _host.guard_native(globs)


def guarding():
    """What is guarded, as one line for summaries."""
    h = _host.stats() or {}
    parts = []
    if _host.active():
        numpy_state = _numpy.status()
        parts.append(f'host memory (numpy arrays: {numpy_state}'
                     + (f', {h.get("numpy", {}).get("allocations", 0)} allocations' if numpy_state == 'guarded' else '')
                     + (f'; native heap of {", ".join(_active.native_modules)}: {h.get("nativeAllocations", 0)} allocations'
                        if _active is not None and getattr(_active, 'native_modules', None) else '')
                     + ')')
    if _device_off:
        parts.append(f'CUDA device memory: not guarded ({_device_off})')
    elif _active is not None:
        d = _library.load().stats() or {}
        parts.append(f'CUDA device memory ({d.get("allocations", 0)} allocations)')
    return 'guarded: ' + '; '.join(parts)


def is_guard_allocator_active():
    return _active is not None


def active_config():
    return _active


_SUMMED = ('allocations', 'frees', 'live', 'peakLive', 'liveBytes', 'fallbacks', 'quarantined', 'violations')


def stats():
    """The guard's counters, host and device summed (allocations, frees, live, violations, ...), with
    `host` (numpy, native heap) and `device` (None without a GPU) apart; None when it is off."""
    if _active is None:
        return None
    host = _host.stats() or {}
    out = dict(_library.load().stats() or {}) if _device_off is None else {'device': None}
    for key in _SUMMED:
        out[key] = out.get(key, 0) + host.get(key, 0)
    if not out.get('fallbackReason'):
        out['fallbackReason'] = host.get('fallbackReason')
    out['host'] = host
    out['deviceOff'] = _device_off
    return out


def check_canaries(where=None):
    """Waits for the device, looks for a lost context, and returns the
    reports filed since the last check (empty when clean)."""
    if _active is None:
        return []
    lib = _library.load()
    _host.check()
    lost = lib.check(where)
    reports = [render(path, event) for path, event in lib.new_events()]
    if lost > 0 and not any(r.context_lost for r in reports):
        reports.append(Report(kind='device-fault', text=f'==mate-guard== ERROR: the CUDA context is lost (CUDA error {lost})', file=None, test=None, context_lost=True))
    return reports
