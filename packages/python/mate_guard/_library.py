"""libmate_guard_cuda.so through ctypes: install from a handoff, the
end-of-test check, counters, and the reports the library filed."""

import atexit
import ctypes
import json
import os
import re
import secrets

from ._files import read_report_file, write_new_file
from ._resources import library_path
from ._settings import HANDOFF_ENV

NOT_INSTALLED = -1


class Library:
    def __init__(self, path):
        self.path = path
        self.lib = ctypes.CDLL(path)
        self.lib.mate_guard_install_error.restype = ctypes.c_char_p
        self.lib.mate_guard_stats_json.restype = ctypes.c_char_p
        self.lib.mate_guard_report_dir.restype = ctypes.c_char_p
        self.lib.mate_guard_check_device.argtypes = [ctypes.c_char_p]
        self.lib.mate_guard_set_current_test.argtypes = [ctypes.c_char_p]
        # The one report formatter: malloc'd strings, freed by the library.
        self.lib.mate_guard_format_report.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]
        self.lib.mate_guard_format_report.restype = ctypes.c_void_p
        self.lib.mate_guard_event_problem.argtypes = [ctypes.c_char_p]
        self.lib.mate_guard_event_problem.restype = ctypes.c_void_p
        self.lib.mate_guard_format_reports.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]
        self.lib.mate_guard_format_reports.restype = ctypes.c_void_p
        self.lib.mate_guard_format_rerun.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        self.lib.mate_guard_format_rerun.restype = ctypes.c_void_p
        self.lib.mate_guard_free_report.argtypes = [ctypes.c_void_p]
        self.lib.mate_guard_visible_lines.argtypes = [ctypes.c_char_p]
        self.lib.mate_guard_visible_lines.restype = ctypes.c_void_p
        self.report_dir = None
        self._seen = set()
        # Forked children (multiprocessing's default on Linux) inherit the guard and file their reports in the
        # same folder under their own pid: each leaves a marker naming its parent's token (_forked), so that this
        # process reads its descendants' reports, and not those of other processes sharing the folder (xdist's).
        self._token = secrets.token_hex(8)
        self._markers = {}  # marker file -> (mtime, its pid, its parent's token, its token)
        self._forked_markers = []  # the markers of this process's descendants
        self.forked_violations = 0  # reports read from descendants (counted with this process's)

    def install(self, handoff):
        """Starts the guard with `handoff`'s settings; raises with the library's reason when it cannot."""
        os.environ[HANDOFF_ENV] = json.dumps(handoff)
        # The PyTorch hook (_torch_hook.py) loads the library by this path.
        os.environ['MATE_GUARD_CUDA_LIBRARY'] = self.path
        if self.lib.mate_guard_install_from_env() != 0:
            why = self.lib.mate_guard_install_error().decode(errors='replace')
            raise RuntimeError(f'mate-guard: CUDA guarding could not start: {why}')
        self.watch_reports(handoff)
        # Before the interpreter tears down: stop the background thread,
        # finish pending checks, write the counters.
        atexit.register(self.lib.mate_guard_shutdown)

    def watch_reports(self, handoff):
        """Reads the reports filed from now on in the report folder (host and device): the one given, else
        the library's own fresh one under <tmp>/mate-guard-<uid>/ (made private, checked; removed at exit
        when clean): never a shared fixed folder."""
        self.report_dir = handoff['settings'].get('reportDir') or self.lib.mate_guard_report_dir().decode()
        self._seen = set(event_files(self.report_dir, self._names(), {os.getpid()}))
        global _fork_hook, _owner_pid
        _owner_pid = os.getpid()
        if not _fork_hook:
            os.register_at_fork(after_in_child=_forked)
            # Registered after mate_guard's exit status: runs before it, so the count has the children's reports.
            atexit.register(self._forget_forked)
            _fork_hook = True

    def set_current_test(self, name):
        self.lib.mate_guard_set_current_test((name or '').encode())
        from . import _host

        _host.set_current_test(name)  # also the host's: its fault handler kept first, new modules mapped

    def check(self, where=None):
        """Synchronizes and looks for a sticky error: 0, or the CUDA error that lost the context."""
        return self.lib.mate_guard_check_device((where or '').encode())

    def _owned_text(self, ptr):
        try:
            return ctypes.string_at(ptr).decode('utf-8', errors='replace')
        finally:
            self.lib.mate_guard_free_report(ptr)

    def format_report(self, event_json, fmt, options_json):
        ptr = self.lib.mate_guard_format_report(
            event_json.encode('utf-8', errors='surrogateescape'), fmt.encode(), options_json.encode()
        )
        if not ptr:
            raise ValueError(f'mate-guard: unknown report format "{fmt}" (text)')
        return self._owned_text(ptr)

    def format_rerun(self, event_json, options_json):
        """What the event's filed rerun found, as the run's terminal printed it under the report ('' when nothing)."""
        ptr = self.lib.mate_guard_format_rerun(
            event_json.encode('utf-8', errors='surrogateescape'), options_json.encode()
        )
        return self._owned_text(ptr) if ptr else ''

    def format_reports(self, input_json, fmt, options_json):
        """`mate report`'s sarif or github output of merged events (format_reports.h says what the input holds)."""
        ptr = self.lib.mate_guard_format_reports(
            input_json.encode('utf-8', errors='surrogateescape'), fmt.encode(), options_json.encode()
        )
        if not ptr:
            raise ValueError(f'mate-guard: cannot format reports as "{fmt}" (sarif, github)')
        return self._owned_text(ptr)

    def event_problem(self, event_json):
        return self._owned_text(self.lib.mate_guard_event_problem(event_json.encode('utf-8', errors='surrogateescape')))

    def visible_lines(self, text):
        try:
            raw = text.encode('utf-8', errors='surrogateescape')
        except UnicodeEncodeError:
            # A lone surrogate from a \ud800 escape: its bytes are not UTF-8, so they are shown as \xNN.
            raw = text.encode('utf-8', errors='surrogatepass')
        return self._owned_text(self.lib.mate_guard_visible_lines(raw))

    def stats(self):
        raw = self.lib.mate_guard_stats_json().decode()
        return json.loads(raw) if raw else None

    def _names(self):
        """The report folder's file names, listed once for a check (own reports, markers, descendants' reports)."""
        try:
            return os.listdir(self.report_dir)
        except OSError:
            return []

    def _descendants(self, names):
        """The pids of this process's forked descendants, from their markers among `names` (re-read when
        rewritten)."""
        self._markers = read_fork_markers(self.report_dir, names, self._markers)
        pids, self._forked_markers = family(self._markers, self._token)
        return pids

    def _forget_forked(self):
        """At exit: the descendants' reports counted, their markers removed (the folder holds reports only, and
        a private one is removed when it holds none)."""
        if os.getpid() != _owner_pid:
            return  # a forked child that exits through Python: its parent reads the markers
        self.new_events()
        for path in self._forked_markers:
            for p in (path, path + '.tmp'):
                try:
                    os.unlink(p)
                except OSError:
                    pass

    def new_events(self):
        """The events this process and its forked descendants filed since the last call: (file, event) pairs."""
        out = []
        names = self._names()
        own = event_files(self.report_dir, names, {os.getpid()})
        forked = event_files(self.report_dir, names, self._descendants(names))
        for path in own + forked:
            if path in self._seen:
                continue
            self._seen.add(path)
            if path in forked:
                self.forked_violations += 1
            out.append((path, read_event(path)))
        return out


def event_files(report_dir, names, pids):
    """The event files of the processes `pids` among `names` (a listing of `report_dir`), each process's in the
    order it filed them."""
    found = []
    for name in names:
        m = EVENT_NAME.fullmatch(name)
        if m and int(m[1]) in pids:
            found.append((int(m[1]), int(m[2]), os.path.join(report_dir, name)))
    return [path for _, _, path in sorted(found)]


def read_event(path):
    """A report file's event, parsed; {} when it cannot be read whole (cut short, or not a regular file: the folder
    may be one others write to, so never a FIFO waited on)."""
    try:
        return json.loads(read_report_file(path))
    except (OSError, ValueError):
        return {}


def read_fork_markers(report_dir, names, known=None):
    """The forked children's markers among `names` in `report_dir`: {path: (mtime, its pid, its parent's token,
    its token)}; `known` (an earlier call's) spares reading those unchanged since."""
    markers = {}
    for name in names:
        if not _MARKER_NAME.fullmatch(name):
            continue
        path = os.path.join(report_dir, name)
        try:
            mtime = os.stat(path).st_mtime_ns
            seen = (known or {}).get(path)
            if seen is None or seen[0] != mtime:
                with open(path, encoding='utf-8') as f:
                    m = json.load(f)
                seen = (mtime, int(m['pid']), m['parent'], m['token'])
            markers[path] = seen
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return markers


def family(markers, token):
    """The pids and marker paths of the descendants (children, grandchildren, ...) of the process whose
    token is `token`, among `markers` (read_fork_markers)."""
    tokens, pids, mine = {token}, set(), []
    grown = True
    while grown:
        grown = False
        for path, (_, pid, parent, child) in markers.items():
            if parent in tokens and child not in tokens:
                tokens.add(child)
                pids.add(pid)
                mine.append(path)
                grown = True
    return pids, mine


# A process's report files, mate-guard-<pid>-<n>.json, and a forked child's marker (_forked).
EVENT_NAME = re.compile(r'mate-guard-(\d+)-(\d+)\.json')
_MARKER_NAME = re.compile(r'mate-guard-forked-\d+\.json')
_fork_hook = False
_owner_pid = os.getpid()  # the process that installed the guard (set again at install)


def _forked():
    """In a forked child: a token of its own, and a marker in the report folder naming its parent's, so that the
    parent reads this child's reports (Library._descendants). Written beside and renamed: never half a file, and
    a stale marker of a reused pid replaced, never followed."""
    lib = _loaded
    if lib is None or not lib.report_dir:
        return
    parent, lib._token = lib._token, secrets.token_hex(8)
    lib._markers, lib._forked_markers = {}, []
    lib.forked_violations = 0
    path = os.path.join(lib.report_dir, f'mate-guard-forked-{os.getpid()}.json')
    try:
        write_new_file(path, json.dumps({'pid': os.getpid(), 'parent': parent, 'token': lib._token}))
    except OSError:
        pass  # a folder that cannot take it: the child's reports are still printed and filed


_loaded = None


def load():
    global _loaded
    if _loaded is None:
        path = library_path()
        if not os.path.exists(path):
            raise RuntimeError(
                f'mate-guard: the CUDA guard library is missing: {path} (a broken install? reinstall mate-guard)'
            )
        _loaded = Library(path)
    return _loaded
