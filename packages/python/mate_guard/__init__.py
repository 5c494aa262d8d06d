"""mate-guard for Python: every guarded allocation sits against an
inaccessible guard page with canary slack on the other side, so an overrun
faults or is caught at free. Host memory everywhere (numpy arrays through
numpy's allocation handler, the native heap of chosen extension modules
with `native_modules`), CUDA device memory where there is a GPU.

    from mate_guard import GuardAllocatorConfig, install_guard_allocator
    install_guard_allocator(GuardAllocatorConfig(mode='tail'))

Install before the first CUDA allocation. numpy arrays made from then on
are guarded (numpy imported now or later). PyTorch's tensors are routed to
the guard when torch is importable (now, or at its import); processes
that allocate through the C ABI (mate_guard.h) are guarded either way.
`pytest --guard-alloc` and `python -m mate_guard script.py` do this for you.
"""

import atexit
import importlib.util
import json
import os
import sys

from . import _host, _library, _numpy
from ._config import GuardAllocatorConfig
from ._files import write_new_file
from ._format import Report, render
from ._settings import GuardConfigError, unused_without_device

__all__ = [
    'GuardAllocatorConfig',
    'GuardConfigError',
    'GuardViolationError',
    'Report',
    'check_canaries',
    'guard_native_modules',
    'install_guard_allocator',
    'is_guard_allocator_active',
    'stats',
]

ALREADY_ACTIVE = 'Guard allocator is already active with a different configuration'
TOO_LATE = 'Guard allocator must be installed before the first CUDA allocation in the process'

_active = None  # the GuardAllocatorConfig installed
_device_off = None  # why device memory is not guarded (no CUDA driver here), or None
skipped_by_tag = 0  # tests the pytest plugin skipped by tag, for the counters file (a report folder given)
# Whether this process's exit status tells of violations (exit_code). The
# pytest plugin turns it off: pytest's own status is the run's there.
_exit_status_owned = True


class GuardViolationError(AssertionError):
    """check_canaries() found violations: `reports` holds them (their text is the message)."""

    def __init__(self, reports):
        self.reports = list(reports)
        super().__init__('\n'.join(r.text for r in self.reports))


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
    RuntimeError. A bad setting: GuardConfigError naming it. A CUDA setting
    where there is no CUDA driver: one warning line on stderr (it does nothing).
    """
    _install(config, lambda r: f'GuardAllocatorConfig {r["spellings"]["pythonKey"]}')


def _install(config, spelled):
    """install_guard_allocator; `spelled` names a setting as its caller was given it, for the warning of a CUDA
    setting without the device guard (None: the caller said it already)."""
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
    # Device memory where a CUDA driver is, host memory everywhere. The
    # device guard first: the report folder it picks is the host guard's too.
    missing = _host.cuda_missing(lib)
    # A CUDA setting where no device memory can be guarded: said to do nothing.
    for line in unused_without_device(vars(config), spelled, missing) if spelled else []:
        sys.stderr.write(line + '\n')
    if missing:
        _device_off = missing
    else:
        lib.install(handoff)
    _host.install(lib, handoff)
    _numpy.install()
    if missing:
        lib.watch_reports(handoff)  # the folder the host guard picked
        if handoff['settings'].get('reportDir'):
            # A folder given is the run's, kept for `python -m mate_guard report` / `mate report` clean or not:
            # each process's counters in it, as the device guard writes its own where there is a GPU (at
            # install, so that a process killed later still leaves them; again at exit).
            _write_host_counters(exited=False)
            atexit.register(_write_host_counters)
    atexit.register(_host_exit_check)  # registered after the device's shutdown: runs before it
    atexit.register(_warn_unmatched_globs)  # before the exit status's lines (registered later: runs earlier)
    _active = config
    if missing:
        return
    # PyTorch's allocations, when torch is there: now if imported, else at its import.
    if 'torch' in sys.modules or importlib.util.find_spec('torch') is not None:
        _load_torch_hook().install_import_hook()


# n of this process's counters file, stats-<pid>-<n>.json: a process that took the place of an earlier one with
# the same pid (the pytest plugin's continuation after a fault) takes the next n, leaving the earlier one's file.
counters_index = 0


def _write_host_counters(exited: bool = True) -> None:
    """This process's host counters as `stats-<pid>-<counters_index>.json` in the report folder (written beside,
    then renamed)."""
    if os.getpid() != _library._owner_pid:
        return  # a forked child that exits through Python: its parent's counters stand for the run
    try:
        counters = dict(_host.stats() or {}, threadId=counters_index, skippedByTag=skipped_by_tag, exited=exited)
        path = os.path.join(_library.load().report_dir, f'stats-{os.getpid()}-{counters_index}.json')
        write_new_file(path, json.dumps(counters) + '\n')
    except OSError:
        pass  # the counters are best effort; violations have files of their own


def _host_exit_check():
    """At exit, damage still unreported (blocks freed since the last check, live ones): filed and printed."""
    _host.check(all_live=True)


def unmatched_glob_warnings(globs: list[str]) -> list[str]:
    """One warning line per native-heap glob that matched no loaded module (the Node runners' wording)."""
    return [
        f'[mate-guard] warning: native heap: {json.dumps(g)} matched no loaded module, so nothing of it was guarded '
        "(globs match a module's absolute path or file name, e.g. '*_myext*.so')"
        for g in globs
    ]


def _warn_unmatched_globs():
    """At exit (python -m mate_guard, the API): a glob that matched nothing is said, not silently a no-op.
    Under pytest the summary says it, for the whole run."""
    if not _exit_status_owned:
        return
    for line in unmatched_glob_warnings((_host.stats() or {}).get('nativeUnmatched') or []):
        sys.stderr.write(line + '\n')


def device_guarded():
    """True when CUDA device memory is guarded in this process."""
    return _active is not None and _device_off is None


def guard_native_modules(globs):
    """Guards the native heap of loaded and later-loaded modules whose path or file name matches `globs`
    (e.g. '*_myext*.so', or a list of them); needs install_guard_allocator first. A bad value raises
    GuardConfigError naming it, as GuardAllocatorConfig(native_modules=...) does."""
    from ._settings import CONFIG_ROWS, parse

    row = next(r for r in CONFIG_ROWS if r['key'] == 'nativeModules')
    if isinstance(globs, str):
        globs = [globs]
    checked = parse(row, globs, 'guard_native_modules')
    if not checked or len(checked) != len(globs):  # an empty list, or an empty glob in it, guards nothing
        raise GuardConfigError(f'guard_native_modules: {globs!r} names an empty glob or none; use {row["hint"]}')
    _host.guard_native(checked)


def plural(n: int, word: str) -> str:
    """`n` and `word`, in the plural unless n is 1 (summaries, counts in reports)."""
    return f'{n} {word}{"" if n == 1 else "s"}'


def guarding(host=None, numpy_state=None):
    """What is guarded, as one line for summaries: this process's host
    counts, or `host` and `numpy_state` given (a run's, summed over
    pytest-xdist's workers)."""
    h = host if host is not None else (_host.stats() or {})
    parts = []
    if _host.active():
        numpy_state = numpy_state or _numpy.status()
        n = h.get('numpy', {})
        # What numpy made that is not guarded (the counting default handler's counts, _numpy.py).
        left = [
            f'{n[k]} {what}'
            for k, what in (
                ('beforeInstallFreed', 'made before install (counted when freed)'),
                ('unguarded', 'made where the handler was not set (a thread started before install or from C)'),
            )
            if n.get(k)
        ]
        # The native heap's globs: given at install or to guard_native_modules() later (a run's: every worker's).
        globs = list(h['nativeGlobs']) if 'nativeGlobs' in h else _host.native_globs()
        parts.append(
            f'host memory (numpy arrays: {numpy_state}'
            + (f', {plural(n.get("allocations", 0), "allocation")}' if numpy_state == 'guarded' else '')
            + (f', not guarded: {", ".join(left)}' if left else '')
            + (
                f'; native heap of {", ".join(globs)}: {plural(h.get("nativeAllocations", 0), "allocation")}'
                if globs
                else ''
            )
            + ')'
        )
    if _device_off:
        parts.append(f'CUDA device memory: not guarded ({_device_off})')
    elif _active is not None:
        d = _library.load().stats() or {}
        parts.append(f'CUDA device memory ({plural(d.get("allocations", 0), "allocation")})')
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
    # Reports of forked children (multiprocessing) read so far: their damage is this run's.
    out['forkedViolations'] = _library.load().forked_violations
    out['violations'] += out['forkedViolations']
    if not out.get('fallbackReason'):
        out['fallbackReason'] = host.get('fallbackReason')
    out['host'] = host
    out['deviceOff'] = _device_off
    return out


def check_canaries(where=None):
    """Waits for the device and looks for a lost context and for canary
    damage found since the last check. Clean (or the guard off): returns [].
    Otherwise raises GuardViolationError holding the reports."""
    reports = _new_reports(where)
    if reports:
        raise GuardViolationError(reports)
    return []


def _new_reports(where=None):
    """The reports filed since the last check (the pytest plugin's per-test check)."""
    if _active is None:
        return []
    lib = _library.load()
    _host.check()
    lost = lib.check(where) if _device_off is None else 0
    counted = (_host.stats() or {}).get('violations', 0)  # before the files are read: each is on disk by now
    events = lib.new_events()
    reports = [render(path, event) for path, event in events]
    reports += _unfiled_host_reports(counted, events)
    if lost > 0 and not any(r.context_lost for r in reports):
        # The library's report of the loss may be still being written by the
        # thread that saw it first: wait for it a moment (once: the context is gone).
        import time

        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and not any(r.context_lost for r in reports):
            time.sleep(0.05)
            reports += [render(path, event) for path, event in lib.new_events()]
    if lost > 0 and not any(r.context_lost for r in reports):
        reports.append(
            Report(
                kind='device-fault',
                text=f'==mate-guard== ERROR: the CUDA context is lost (CUDA error {lost})',
                file=None,
                test=None,
                context_lost=True,
            )
        )
    return reports


# Host violations this process counted, and those its checks accounted for (a filed event read, or an
# "unfiled" report): every counted one has its event file written before it is counted (host_guard.cc).
_host_accounted = 0


def _unfiled_host_reports(counted: int, events: list) -> list[Report]:
    """A report for host violations counted (`counted`: the host's count read before `events` were) that no
    event file stands for (the report folder went, or the disk filled up): the violation still fails its
    test, and the run; its text went to stderr only."""
    global _host_accounted
    # The host guard counts numpy arrays' violations (backend host) and the native heap's (backend native-heap).
    _host_accounted += sum(
        1 for _, e in events if e.get('backend') in ('host', 'native-heap') and e.get('pid') in (None, os.getpid())
    )
    missing = counted - _host_accounted
    if missing <= 0:
        return []
    _host_accounted = counted
    where = _library.load().report_dir
    return [
        Report(
            kind='unfiled',
            text=f'==mate-guard== ERROR: {plural(missing, "violation")} whose report could not be '
            f'written to the report folder {where}: the report printed on stderr is all there is',
            file=None,
            test=None,
            context_lost=False,
        )
    ]


def _exit_status():
    """At exit: a process that had violations exits with the config's
    exit_code, as sanitizers do, so CI does not pass it. Registered when the
    package is imported, so it runs after the library's own shutdown
    (atexit runs in reverse), which finishes the pending checks."""
    if _active is None or not _exit_status_owned or not _active.exit_code:
        return
    if _device_off is None:
        _library.load().lib.mate_guard_shutdown()  # idempotent: the pending checks are done before the count
    _library.load().new_events()  # forked children's reports (they printed them): counted by stats()
    s = stats() or {}
    n, forked = s.get('violations', 0), s.get('forkedViolations', 0)  # host, device and forked children
    if not n:
        return
    code = _active.exit_code
    where = _library.load().report_dir
    if where:
        sys.stderr.write(
            f'==mate-guard== report files (JSON): {where} (python -m mate_guard report {where} prints them)\n'
        )
    sys.stderr.write(
        f'==mate-guard== {plural(n, "violation")} in this process'
        + (f' and its forked children ({forked} in children)' if forked else '')
        + f': exit status {code} '
        f'(exit_code; 0 leaves the status alone)\n'
    )
    # The status can only be set by ending here: what Python would still do is flushing.
    if 'logging' in sys.modules:
        sys.modules['logging'].shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(code)


atexit.register(_exit_status)
