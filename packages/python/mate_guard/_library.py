"""libmate_guard_cuda.so through ctypes: install from a handoff, the
end-of-test check, counters, and the reports the library filed."""

import atexit
import ctypes
import glob
import json
import os

from ._files import read_report_file
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
        self.lib.mate_guard_free_report.argtypes = [ctypes.c_void_p]
        self.lib.mate_guard_visible_lines.argtypes = [ctypes.c_char_p]
        self.lib.mate_guard_visible_lines.restype = ctypes.c_void_p
        self.report_dir = None
        self._seen = set()

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
        self._seen = set(self._event_files())

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

    def _event_files(self):
        return sorted(
            glob.glob(os.path.join(self.report_dir, f'mate-guard-{os.getpid()}-*.json')),
            key=lambda p: int(p.rsplit('-', 1)[1].split('.')[0]),
        )

    def new_events(self):
        """The events this process filed since the last call: (file, event) pairs."""
        out = []
        for path in self._event_files():
            if path in self._seen:
                continue
            self._seen.add(path)
            try:
                # Only this process's own files, but in a folder others may write to: never a FIFO waited on.
                out.append((path, json.loads(read_report_file(path))))
            except (OSError, ValueError):
                out.append((path, {}))
        return out


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
