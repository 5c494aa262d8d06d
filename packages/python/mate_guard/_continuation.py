"""Plain pytest going on after a fault on guarded host memory. The fault
kills the process (the native code that faulted cannot be resumed), so once
the tests are collected the plugin arms the crash handler with a
continuation: after the fault's report the process is replaced (execve: the
same pid, so a shell or CI gets the continuation's exit status) by pytest
on the same command line, in the same folder. The armed process logs each
test's start and reports (pytest's own serialization, as pytest-xdist sends
them) as they happen: all that is left of it once it is replaced. The
continuation replays them through its hooks (terminal, junitxml, the cache,
-x and the exit status see them as its own), fails the faulting test with
its report, runs the tests after it, and arms itself the same way.

On the terminal the run reads as one: the continuation holds back its
session header, its collection and the tests the replaced processes showed
(one line says where it goes on), and the summary's duration and
junitxml's time are the whole run's (the first process's start, in each
log's header).

Only a top-level pytest process arms it: an xdist worker is replaced by
xdist, a fresh process run for a parent (_subrun.py) is watched by it, and
a one-step rerun is meant to fault."""

from __future__ import annotations

import copy
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from typing import Any

from ._library import event_files, family, read_event, read_fork_markers

ENV = 'MATE_PYTEST_CONTINUE'  # the continuation's folder: run.json, one log per process of the run
OFF_ENV = 'MATE_PYTEST_NO_CONTINUATION'  # tuning (bench/): never armed, the process dies at a fault as before
# sys.path[0] as the interpreter set it (the pytest script's folder, or the
# current one under `python -m pytest`), read when the plugin is imported,
# before pytest's prepend import mode puts test folders in front. The
# continuation starts with `-c`, which would put '' there instead.
PATH0 = sys.path[0] if sys.path else ''
_LOG_NAME = re.compile(r'log-(\d+)\.jsonl')
_LAUNCHER = (
    'import json, os, sys\n'
    'with open(os.path.join(sys.argv[1], "run.json"), encoding="utf-8") as f:\n'
    '    run = json.load(f)\n'
    'os.chdir(run["dir"])\n'
    'if not getattr(sys.flags, "safe_path", False):\n'
    '    sys.path[0] = run["path0"]\n'
    'sys.argv = ["pytest", *run["args"]]\n'
    'import pytest\n'
    'sys.exit(pytest.console_main())\n'
)
PHASES = ('setup', 'call', 'teardown')


def can_arm(config) -> str:
    """'' when this process can be continued, else why not."""
    if not sys.executable:
        return 'no Python executable to start'
    if config.invocation_params.plugins:
        return 'pytest was started with plugin objects (pytest.main(plugins=...)), which a new process cannot have'
    return ''


class Log:
    """The armed process's side: a header (what came before it), then each test's start and reports."""

    def __init__(self, folder: str, gen: int, header: dict[str, Any]):
        self.folder = folder
        path = os.path.join(folder, f'log-{gen}.jsonl')
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC, 0o600)
        self._write(dict(header, gen=gen))

    def start(self, nodeid: str, location) -> None:
        self._write({'start': nodeid, 'location': list(location)})

    def report(self, config, report) -> None:
        self._write({'report': config.hook.pytest_report_to_serializable(config=config, report=report)})

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def _write(self, obj) -> None:
        if self._fd >= 0:
            os.write(self._fd, (json.dumps(obj) + '\n').encode())


def arm(config, gen: int, folder: str | None, header: dict[str, Any], std_fds, set_continuation) -> Log:
    """Logs from now on and sets the crash handler's continuation (`set_continuation(argv, envp, std_fds)`):
    the first process of a run makes the folder and writes how to start pytest again."""
    if folder is None:
        folder = tempfile.mkdtemp(prefix='mate-pytest-continue-')
        run = {'args': list(config.invocation_params.args), 'dir': str(config.invocation_params.dir), 'path0': PATH0}
        with open(os.path.join(folder, 'run.json'), 'w', encoding='utf-8') as f:
            json.dump(run, f)
    log = Log(folder, gen, header)
    argv = [sys.executable, *subprocess._args_from_interpreter_flags(), '-c', _LAUNCHER, folder]
    env = dict(os.environ, **{ENV: folder})
    set_continuation(
        [os.fsencode(a) for a in argv], [os.fsencode(k) + b'=' + os.fsencode(v) for k, v in env.items()], std_fds
    )
    return log


class Resumed:
    """The continuation's side: what the process it replaced logged."""

    def __init__(self, folder: str):
        self.folder = folder
        try:
            gens = [int(m[1]) for m in map(_LOG_NAME.fullmatch, os.listdir(folder)) if m]
        except OSError as err:
            gens, why = [], err.strerror
        else:
            why = 'it holds no log'
        if not gens:  # set by hand, or a folder gone: the plugin's own variable, never a user's
            raise ValueError(
                f'mate-guard: {ENV}={folder!r} is not the folder of a pytest run that went on after a fault ({why})'
            )
        self.gen = max(gens) + 1  # this process's
        self.header: dict[str, Any] = {}
        self.tests: dict[str, dict[str, Any]] = {}  # node id -> location, reports (serialized), in start order
        last = None
        with open(os.path.join(folder, f'log-{self.gen - 1}.jsonl'), encoding='utf-8') as f:
            for line in f:
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue  # a line cut short by the fault: nothing after it was written
                if 'start' in obj:
                    last = obj['start']
                    self.tests[last] = {'location': tuple(obj['location']), 'reports': []}
                elif 'report' in obj:
                    t = self.tests.get(obj['report'].get('nodeid'))
                    if t is not None:
                        t['reports'].append(obj['report'])
                elif not self.header:
                    self.header = obj
        # The test the fault ended: the last one started, unless its teardown was logged (then the fault came
        # between tests or after them, outside any test).
        whens = {r.get('when') for r in self.tests[last]['reports']} if last else set()
        self.faulted = last if last and 'teardown' not in whens else None
        self.faulted_when = next((p for p in PHASES if p not in whens), 'teardown')

    def dead_events(self) -> tuple[list[tuple[str, dict]], list[tuple[str, dict]]]:
        """The report files the replaced process filed (its pid, not there when it started), and those of the
        children it forked (multiprocessing), each in filing order; the children's markers are removed (their
        parent, which would have, is gone)."""
        report_dir, pid = self.header.get('reportDir') or '', self.header.get('pid')
        before = set(self.header.get('eventsBefore') or [])
        try:
            names = os.listdir(report_dir)
        except OSError:
            return [], []
        children, markers = family(read_fork_markers(report_dir, names), self.header.get('token'))
        own = [p for p in event_files(report_dir, names, {pid}) if os.path.basename(p) not in before]
        forked = event_files(report_dir, names, children)
        for path in markers:
            try:
                os.unlink(path)
            except OSError:
                pass
        return [(p, read_event(p)) for p in own], [(p, read_event(p)) for p in forked]

    def fault_report(self, text: str) -> dict[str, Any]:
        """The faulting test's failure, serialized as pytest-xdist sends reports."""
        return {
            '$report_type': 'TestReport',
            'nodeid': self.faulted,
            'location': list(self.tests[self.faulted]['location']),
            'keywords': {},
            'outcome': 'failed',
            'longrepr': text,
            'when': self.faulted_when,
            'sections': [],
            'duration': 0.0,
            'user_properties': [],
        }


class _Nowhere(io.TextIOBase):
    """A text file that keeps nothing written to it (not a terminal)."""

    def write(self, s):
        return len(s)


def mute(tr):
    """Points pytest's terminal reporter `tr` at a writer that writes nowhere; the real one to give back to
    unmute, or None where this pytest's reporter has no writer to swap (it then prints as it always did)."""
    real = getattr(tr, '_tw', None)
    if real is None:
        return None
    try:
        quiet = type(real)(file=_Nowhere())
        quiet.hasmarkup = real.hasmarkup
        quiet.fullwidth = real.fullwidth  # the same lines: the progress column where the terminal has it
    except Exception:  # a writer of another shape: print as before
        return None
    tr._tw = quiet
    return real


def unmute(tr, real) -> None:
    if real is not None:
        tr._tw.flush()
        tr._tw = real


def start_back(config, tr, started: float) -> None:
    """The session's start, as pytest's terminal reporter and junitxml keep it, set back to `started` (time.time()
    as the run's first process began its session): the summary's "in N s" and junitxml's time and timestamp are
    the whole run's. Where this pytest keeps them some other way they are left as they were (this process's)."""
    holders = [(tr, '_session_start', '_sessionstarttime')]  # pytest >= 8.4: a timing.Instant; before: time.time()
    try:
        from _pytest.junitxml import xml_key

        xml = config.stash.get(xml_key, None)
    except Exception:
        xml = None
    holders.append((xml, 'suite_start', 'suite_start_time'))
    for holder, instant, seconds in holders:
        if holder is None:
            continue
        try:
            if isinstance(getattr(holder, seconds, None), float):
                setattr(holder, seconds, min(getattr(holder, seconds), started))
                continue
            now = getattr(holder, instant, None)
            if isinstance(getattr(now, 'time', None), float) and isinstance(getattr(now, 'perf_count', None), float):
                earlier = now.time - started
                if earlier > 0:
                    back = copy.copy(now)  # a frozen dataclass: its fields set as its own __init__ sets them
                    object.__setattr__(back, 'time', started)
                    object.__setattr__(back, 'perf_count', now.perf_count - earlier)
                    setattr(holder, instant, back)
        except Exception:  # another shape: this process's time, as before
            continue
