"""pytest plugin (entry point `mate_guard`): `pytest --guard-alloc` guards
the test process's host memory (numpy arrays; with --guard-native, the
native heap of chosen extension modules) and its CUDA device memory where
there is a GPU. Inactive unless asked: by a
flag (also through addopts / PYTEST_ADDOPTS), MATE_PYTEST_GUARD_ALLOC or
the ini key guard_alloc; flag > environment > ini > off, per setting. The
flags, variables and ini keys come from the settings table (settings.json).

One run reports every bug of a suite: after a fault that loses the CUDA
context the tests left run in a fresh process (_subrun.py), after a fault
on guarded host memory pytest goes on in the process's place
(_continuation.py), and a kernel
exception found without launch blocking reruns its test with it; under
pytest-xdist each worker's counts reach the controller, whose summary is
the run's."""

import gc
import glob
import json
import os
import shutil
import sys
import time

import pytest

from . import _continuation, _host, _library, _rerun, _subrun, plural
from ._report_dir import make_report_dir
from ._resources import library_path
from ._settings import CONFIG_ROWS, ROWS, GuardConfigError, description, parse, suggestion, unused_without_device

GRAPH_REASON = 'guard allocator debug mode does not support graph capture'
MARKERS = {
    'guard_incompatible': 'skipped under --guard-alloc (mate-guard): the test cannot run on the guard allocator',
    'graph_capture': 'skipped under --guard-alloc (mate-guard): the test captures CUDA graphs, which the guard refuses',
}
ENV_PREFIX = 'MATE_PYTEST_GUARD_'
# What a setting does under pytest where it differs from the table's (Node runners') description.
PYTEST_HELP = {
    'rerun': 'After a session with canary damage in host memory, each such test runs once more in a child pytest '
    'with the placement that makes its first bad access fault (the other mode, --guard-alignment 1 or '
    "--guard-native-exact-size), and that fault's report is printed after the summary. A kernel exception (a "
    'fault that loses the CUDA context) found without launch blocking reruns that one test alone in a fresh '
    "process with launch blocking, and its failure shows the rerun's report, which names the exact launch; the "
    'summary says what the reruns cost.',
}


def _sp(row, what):
    return row['spellings'][what]


def _dest(row):
    return 'mate_guard_' + _sp(row, 'pythonKey')


def pytest_addoption(parser):
    group = parser.getgroup('mate-guard', 'mate-guard: host and CUDA device memory guard')
    for row in ROWS:
        flag = _sp(row, 'pytestFlag')
        help = f'{PYTEST_HELP.get(row["key"], description(row))} (env {_sp(row, "pytestEnv")}, ini {_sp(row, "pytestIni")}, default {row["defaultText"]})'
        help = help.replace('%', '%%')
        if row['value']['type'] == 'boolean':
            group.addoption(flag, action='store_true', dest=_dest(row), default=None, help=help)
            group.addoption(
                '--no-' + flag[2:], action='store_false', dest=_dest(row), default=None, help=f'turn {flag} off'
            )
        else:
            # Values parsed here, not by argparse: one wording for flags, variables and ini. A repeatable one
            # (--guard-native) gathers every use, as the Node runners' flags do.
            action = 'append' if row.get('repeatable') else 'store'
            group.addoption(flag, dest=_dest(row), default=None, action=action, metavar=row['placeholder'], help=help)
        parser.addini(_sp(row, 'pytestIni'), help=help, default=None)


def _known_flags():
    out = []
    for row in ROWS:
        out.append(_sp(row, 'pytestFlag'))
        if row['value']['type'] == 'boolean':
            out.append('--no-' + _sp(row, 'pytestFlag')[2:])
    return out


def _bad_setting(message):
    """A bad setting ends the session as in every mate-guard entry point: one line, exit 2.

    pytest's UsageError would print `ERROR: ...` and exit 4. Raised where pytest
    lets SystemExit through (initial conftests, cmdline_main), before collection.
    """
    sys.stderr.write(f'mate-guard: {message}\n')
    sys.stderr.flush()
    raise SystemExit(2)


def _refuse_misspellings(args, ini_keys):
    """A misspelled guard setting stops the session before collection, with the nearest spelling."""
    flags = _known_flags()
    for arg in args:
        name = arg.split('=', 1)[0]
        if (name.startswith('--guard-') or name.startswith('--no-guard-')) and name not in flags:
            _bad_setting(f'unknown option "{name}"{suggestion(name, flags)}')
    envs = [_sp(r, 'pytestEnv') for r in ROWS]
    for name in sorted(os.environ):
        if name.startswith(ENV_PREFIX) and name not in envs:
            _bad_setting(f'unknown environment variable "{name}"{suggestion(name, envs)}')
    inis = [_sp(r, 'pytestIni') for r in ROWS]
    for name in sorted(ini_keys):
        if name.startswith('guard_') and name not in inis:
            _bad_setting(f'unknown ini option "{name}"{suggestion(name, inis)}')


def _ini_keys(config):
    """The ini file's keys. pytest 9 keeps them in _inicfg (its `inicfg`
    warns PytestRemovedIn10Warning from 9.1); older pytest has `inicfg` only."""
    keys = getattr(config, '_inicfg', None)
    if keys is None:
        keys = getattr(config, 'inicfg', None)
    return list(keys or ())


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    _refuse_misspellings(args, _ini_keys(early_config))


def _ini_value(config, name):
    """The ini key's value as the config file wrote it. pytest 9's own TOML table ([tool.pytest]) keeps TOML's
    types and its getini refuses any but a string for a key registered as one (a TypeError, a traceback): there the
    TOML value itself (true, 16, a list of globs) is taken, and parsed as the setting's kind like any other."""
    try:
        return config.getini(name)
    except ValueError:
        return None
    except TypeError:
        entry = (getattr(config, '_inicfg', None) or {}).get(name)
        return getattr(entry, 'value', None)


def _ini(config, row):
    value = _ini_value(config, _sp(row, 'pytestIni'))
    if isinstance(value, list) and all(isinstance(v, str) for v in value):  # an ini key read as lines, a TOML list
        value = ','.join(value)
    if isinstance(value, str) and row['value']['type'] == 'list':
        # A list in ini is written as pytest's own are: one per line, or several on a line (spaces or commas).
        value = ','.join(value.replace(',', ' ').split())
    return value if value not in (None, '') else None


def resolve(config, spelled=None):
    """Every pytest setting: flag > MATE_PYTEST_GUARD_* > ini > the table's default. `spelled`, when given, gets
    the flag, variable or ini key each setting given came from (for errors found later)."""
    out = {}
    for row in ROWS:
        key = _sp(row, 'pythonKey')
        flag = config.getoption(_dest(row))
        env = os.environ.get(_sp(row, 'pytestEnv'))
        ini = _ini(config, row)
        proc = os.environ.get(row['processEnv']) if row['processEnv'] else None
        if isinstance(flag, list):  # a repeatable flag: each use parsed, then all of them
            value, where = [v for f in flag for v in parse(row, f, _sp(row, 'pytestFlag'))], None
        elif flag is not None:
            value, where = flag, _sp(row, 'pytestFlag')
        elif env not in (None, ''):
            value, where = env, _sp(row, 'pytestEnv')
        elif ini is not None:
            value, where = ini, f'ini {_sp(row, "pytestIni")}'
        elif proc not in (None, ''):
            value, where = proc, row['processEnv']
        else:
            out[key] = row['default']
            continue
        out[key] = value if where is None else parse(row, value, where)
        if spelled is not None:
            spelled[key] = where or _sp(row, 'pytestFlag')
    return out


def _zero_summary():
    return {
        'stats': {'allocations': 0, 'peakLive': 0, 'fallbacks': 0, 'violations': 0, 'fallbackReason': None},
        'processes': 0,
        'lost': [],
        'late': [],
        'reruns': [],
        'reportDirs': [],
        'host': {'numpy': {}, 'nativeAllocations': 0},
        'numpyState': None,
        'reports': [],
        'faulted': [],
    }


def _add(total, part):
    """Adds one process's (or process tree's) summary to `total`."""
    t, s = total['stats'], part.get('stats') or {}
    for k in ('allocations', 'fallbacks', 'violations'):
        t[k] += s.get(k, 0) or 0
    t['peakLive'] = max(t['peakLive'], s.get('peakLive', 0) or 0)
    if s.get('fallbacks') and not t.get('fallbackReason'):
        t['fallbackReason'] = s.get('fallbackReason')
    total['processes'] += part.get('processes', 1)
    for k in ('lost', 'late', 'reruns', 'reports', 'faulted'):
        total[k] += part.get(k) or []
    for d in part.get('reportDirs') or []:
        if d not in total['reportDirs']:
            total['reportDirs'].append(d)
    # Host memory's own counts (numpy arrays, native heap), for the "guarded:"
    # line: a process's stats carry them, a summed summary (an xdist worker's) too.
    host, th = part.get('host') or s.get('host') or {}, total['host']
    th['nativeAllocations'] += host.get('nativeAllocations', 0) or 0
    if isinstance(host.get('nativeGlobs'), list):  # guarded in any process of the run
        th['nativeGlobs'] = list(dict.fromkeys((th.get('nativeGlobs') or []) + host['nativeGlobs']))
    if isinstance(host.get('nativeUnmatched'), list):  # unmatched in the run: in every process that says
        seen = th.get('nativeUnmatched')
        th['nativeUnmatched'] = [
            g for g in (host['nativeUnmatched'] if seen is None else seen) if g in host['nativeUnmatched']
        ]
    for k, v in (host.get('numpy') or {}).items():
        th['numpy'][k] = th['numpy'].get(k, 0) + (v or 0)
    if part.get('numpyState') and total.get('numpyState') != 'guarded':
        total['numpyState'] = part['numpyState']


class _Guard:
    """The guard of one pytest process: brackets tests, turns findings into failures."""

    def __init__(self, config, settings):
        import mate_guard
        from . import GuardAllocatorConfig, _install

        self.config = config
        self.settings = settings
        keys = {_sp(r, 'pythonKey') for r in CONFIG_ROWS}
        fields = {k: v for k, v in settings.items() if k in keys}
        # A test to fail: a free checks its canary at once (the Node runners'
        # default). Not in an xdist worker: its waits queue behind the other
        # workers' work on the GPU they share, and each test's end checks the
        # frees still pending (same findings, same test; bench/README.md).
        # Only where the device guard is on: elsewhere it would be said to do nothing.
        if fields.get('sync_on_free') is None and not _host.cuda_missing(_library.load()):
            fields['sync_on_free'] = getattr(config, 'workerinput', None) is None

        _host.report_fd = os.dup(2)  # the terminal's stderr (pytest captures fd 2 during tests)
        _install(GuardAllocatorConfig(**fields), None)  # a CUDA setting without the device: said at the command line
        mate_guard._exit_status_owned = False  # pytest's own exit status is the run's
        self.lib = _library.load()
        self.lost_in = None  # node id of the test whose fault lost the CUDA context
        self.reports = []  # every report of the session
        self.late = []  # reports made outside any test (collection, the session's end)
        self.skipped = 0  # tests skipped by tag, counted from the reports this process shows
        self.recorder = _subrun.Recorder(config, _role.results)
        self.continued = None  # the summary of the fresh process that ran the tests after a lost context
        self.reruns = []  # [node id, seconds] of this process's launch-blocking reruns
        self.worker_lost = []  # xdist's controller: (worker, node id) of each worker that lost its context
        self.end_worker = False
        self.live_at = {}  # phase -> device allocations live as it began (mark)
        self.log = None  # once armed: what the process that replaces this one after a fault replays
        self.resumed = None  # what the process this one replaced logged (_continuation.Resumed)
        self.inherited = None  # the summary of the processes this one goes on from
        self.fault_text = ''
        self.said_resumed = False  # the continuation's line, said where its own output begins
        self.replayed_gone = False  # the tests the replaced process ran that this one did not collect
        self.started = None  # time.time() as the run's first process began its session
        self.held = None  # the continuation's terminal writer while its output is held back (_continuation.mute)
        # Report files of earlier processes with this pid (the one this replaced): not this process's.
        self.events_before = sorted(os.path.basename(p) for p in self.lib._seen)
        # Whose session this is: not an xdist worker's (xdist replaces it), a fresh process's (its parent goes
        # on), or a one-step rerun's (meant to fault).
        self.top = _xdist_worker(config) is None and not _role.child and not os.environ.get(_rerun.CHILD_ENV)
        if self.top:
            # A fault on guarded host memory kills this process: said under the report, until the
            # continuation is armed (pytest_collection_finish).
            _host.set_fault_note(FAULT_NOTE)
            self.std_fds = tuple(_copy_of_fd(fd) for fd in (0, 1, 2))  # the terminal's, put back for the continuation
            if _role.resumed:
                try:
                    self._resume(_role.resumed)
                except ValueError as err:
                    raise GuardConfigError(str(err)) from None

    def _resume(self, folder):
        """Goes on from the process this one replaced: its summary (its own counts from the reports it filed,
        with those it went on from), and the faulting test's report."""
        import mate_guard

        from ._format import render

        r = self.resumed = _continuation.Resumed(folder)
        mate_guard.counters_index = r.gen  # the replaced process's counters file stays (same pid)
        events, forked = r.dead_events()
        dead = _events_summary(r.header.get('reportDir'), events)
        dead['stats']['violations'] += len(forked)  # its children's, which it counted as its own
        dead['faulted'] = [r.faulted or '(outside any test)']
        self.inherited = _zero_summary()
        if r.header.get('inherited'):
            _add(self.inherited, r.header['inherited'])
        _add(self.inherited, dead)
        reports = [render(path, event) for path, event in events]
        self.reports += reports  # one-step reruns of its canary damage, and the exit status
        fault = reports[-1].text if reports else ''
        self.fault_text = fault or (
            '==mate-guard== a fault on guarded memory ended the process running this test; its report was printed '
            'above (no report file was left in the report folder)'
        )
        if r.faulted is None:
            self.late.append(f'[mate-guard] a fault on guarded memory ended the process outside any test:\n{fault}')

    def arm_continuation(self):
        """From here on a fault on guarded host memory replaces this process with pytest going on (after
        collection: a fault while pytest collects ends the session)."""
        if not self.top or _xdist_controller(self.config) or not _host.active() or _continuation.can_arm(self.config):
            return
        if os.environ.get(_continuation.OFF_ENV):  # tuning (bench/pytest-continuation.mjs): what the log costs
            return
        header = {
            'pid': os.getpid(),
            'reportDir': self.lib.report_dir,
            'eventsBefore': self.events_before,
            'token': self.lib._token,  # its forked children's markers name it
            'inherited': self.inherited or {},
            'started': self.started,
        }
        r = self.resumed
        self.log = _continuation.arm(
            self.config, r.gen if r else 0, r.folder if r else None, header, self.std_fds, _host.set_fault_continuation
        )
        _host.set_fault_note(CONTINUE_NOTE)

    def disarm_continuation(self):
        if self.log is not None:
            _host.set_fault_continuation([], [], (-1, -1, -1))
            _host.set_fault_note(FAULT_NOTE)
            self.log.close()

    def begin_session(self, session):
        """The session's start (the run's, in a continuation); a continuation holds back its terminal output
        (its session header, its collection, the tests the processes before it showed) until say_resumed."""
        r = self.resumed
        self.started = (r.header.get('started') if r else None) or time.time()
        tr = session.config.pluginmanager.get_plugin('terminalreporter')
        if r is not None and tr is not None:
            self.held = _continuation.mute(tr)

    def say_resumed(self, config):
        """The continuation's output begins: one line where the processes before it stopped."""
        r = self.resumed
        if r is None or self.said_resumed:
            return
        self.said_resumed = True
        tr = config.pluginmanager.get_plugin('terminalreporter')
        if tr is None:
            return
        line = (
            f'[mate-guard] pytest goes on after a fault on guarded memory '
            f'{f"in {r.faulted}" if r.faulted else "outside any test"} (process {r.gen + 1} of the run, '
            f'the same command line; the results so far carry over)'
        )
        if self.held is None:  # its header was printed (a terminal reporter of another shape)
            tr.write_line(line)
            return
        _continuation.unmute(tr, self.held)
        self.held = None
        # The line the faulted process left unfinished ends; the next test's line ends this one.
        if getattr(tr, 'currentfspath', None):
            tr.ensure_newline()
        else:
            tr.write('\n')
        tr.write(line)

    def replay(self, item):
        """In a continuation: a test the replaced process ran (or was running) gets its results from there, not
        a second run. Whether it was one."""
        r = self.resumed
        if not self.replayed_gone:
            self.replayed_gone = True
            ran = {i.nodeid for i in item.session.items}
            for nodeid in [n for n in r.tests if n not in ran]:  # collected then, not now: still this run's
                self._replay_test(item.config, nodeid)
        if item.nodeid not in r.tests:
            self.say_resumed(item.config)
            return False
        self._replay_test(item.config, item.nodeid)
        return True

    def _replay_test(self, config, nodeid):
        r = self.resumed
        t = r.tests[nodeid]
        data = list(t['reports'])
        if nodeid == r.faulted:
            data.append(r.fault_report(self.fault_text))
            # The tests before it were shown by the processes that ran them (held back here); this one's result
            # was not: this process's output begins with it.
            self.say_resumed(config)
        if self.log is not None:
            self.log.start(nodeid, t['location'])
        _subrun.replay(config, [_subrun.deserialize(config, d) for d in data])

    def mark(self, phase):
        """Notes how many device allocations are live as `phase` ('test': its
        setup, 'call': its body) begins, for _collect."""
        from . import device_guarded

        if device_guarded():
            self.live_at[phase] = (self.lib.stats() or {}).get('live', 0)

    def _collect(self, when):
        """Frees the tensors the test dropped now, so that their checks (at
        free) fail this test. Most are freed by their reference count; those
        in reference cycles are young, and a young-generation collection
        (microseconds) frees them. A full one costs tens of milliseconds with
        torch loaded (two a test made suites of small tests 15x slower): it
        runs only when device allocations made since the phase began are
        still live after the young one (garbage that grew old while the test
        held it, or memory the test keeps)."""
        gc.collect(1)
        since = self.live_at.get('call' if when == 'call' else 'test')
        if since is None or (self.lib.stats() or {}).get('live', 0) > since:
            gc.collect()

    def check(self, item, when):
        # Host blocks made in the test are checked whether or not they were
        # freed: a collection is needed only for device memory, whose check
        # runs at its free.
        from . import _new_reports, device_guarded

        if self.lost_in is not None:  # nothing more can be asked of a lost context
            return []
        if device_guarded():
            self._collect(when)
        reports = _new_reports(f'the end of test {item.nodeid}' if when != 'setup' else f'the setup of {item.nodeid}')
        self.reports += reports
        if any(r.context_lost for r in reports) and self.lost_in is None:
            self.lost_in = item.nodeid
        return reports

    def check_collection(self):
        """Damage made while pytest collected (a test module's import, conftest code), found before the first
        test starts: filed as outside any test, so that it fails the session and not the first test to run."""
        from . import _new_reports

        if self.lost_in is not None:
            return
        found = _new_reports('the end of collection')
        self.reports += found
        self.late += [r._replace(text=f'{COLLECTION_NOTE}\n{r.text}') for r in found]

    def own_summary(self):
        """This process's counts, with those of the fresh process it continued in and of the processes it
        took the place of."""
        from . import _numpy, stats

        total = _zero_summary()
        counters = stats() or {}
        _add(
            total,
            {
                'stats': counters,
                # The globs guarded, also those a conftest gave guard_native_modules(), for the summary's "guarded:".
                'host': dict(counters.get('host') or {}, nativeGlobs=_host.native_globs()),
                'numpyState': _numpy.status(),
                'processes': 1,
                'lost': [self.lost_in] if self.lost_in else [],
                'late': [r.text for r in self.late],
                'reruns': list(self.reruns),
                'reportDirs': [self.lib.report_dir] if self.lib.report_dir else [],
            },
        )
        if self.continued:
            _add(total, self.continued)
        if self.inherited:
            _add(total, self.inherited)
        return total


def _copy_of_fd(fd):
    """A copy of descriptor `fd`, -1 when it is closed."""
    try:
        return os.dup(fd)
    except OSError:
        return -1


COLLECTION_NOTE = (
    '[mate-guard] found at the end of collection, outside any test (made while pytest imported the test modules '
    'and conftests): the session fails'
)
FAULT_NOTE = (
    '==mate-guard== pytest ends here: a fault on guarded memory kills the process, and pytest cannot go on in a '
    'fresh one from here (while it collects, after its tests, or started with plugin objects), so no more tests '
    'run and pytest prints no summary (pytest -n 1, with pytest-xdist, replaces the worker and goes on)\n'
)
CONTINUE_NOTE = (
    '==mate-guard== pytest goes on in a fresh process (the same command line, the same pid): a fault on guarded '
    'memory ends this one, so this test fails with the report above, and the results so far carry over\n'
)
_guard = None
_role = None  # why this process runs: all of the run, or some of its tests for a parent (_subrun.Role)
# pytest-xdist: the folder where workers leave their counts (and a worker
# that lost its CUDA context says so), made by the controller and
# inherited by the workers through the environment.
XDIST_DIR = 'MATE_PYTEST_XDIST_DIR'


def _xdist_worker(config):
    inp = getattr(config, 'workerinput', None)
    return inp.get('workerid') if inp else None


def _xdist_controller(config):
    return _xdist_worker(config) is None and bool(getattr(config.option, 'numprocesses', None)) and not _role.child


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """Bad values stop the session here (before pytest_configure, where SystemExit would be an internal error)."""
    if getattr(config.option, 'help', False) or getattr(config.option, 'version', False):
        return None
    spelled = {}
    try:
        settings = resolve(config, spelled)
    except GuardConfigError as err:
        _bad_setting(str(err))
    # No guard library: one line and exit 2 here, as a Node runner with no usable native binary (pytest_configure's UsageError would exit 4).
    if settings.get('enabled') and not os.path.exists(library_path()):
        _bad_setting(f'the CUDA guard library is missing: {library_path()} (a broken install? reinstall mate-guard)')
    # The device guard is on wherever there is a CUDA driver: a CUDA setting elsewhere does nothing (said once,
    # not again in each xdist worker).
    if settings.get('enabled') and getattr(config, 'workerinput', None) is None:
        missing = _host.cuda_missing(_library.load())
        for line in unused_without_device(settings, lambda r: spelled[_sp(r, 'pythonKey')], missing):
            sys.stderr.write(line + '\n')
    if settings.get('enabled') and settings.get('report_dir'):
        # Made here, parents too (`--guard-report-dir out/mate-guard` before out/ exists, as CI has it), or refused
        # in one line: a folder that cannot hold reports would lose every violation. The library makes it the same
        # way at install; here a failure is one line and exit 2 rather than pytest_configure's usage error.
        why = make_report_dir(settings['report_dir'])
        if why:
            _bad_setting(why)
    return None


def pytest_configure(config):
    global _guard, _role
    _role = _subrun.Role()
    for name, text in MARKERS.items():
        config.addinivalue_line('markers', f'{name}: {text}')
    try:
        settings = resolve(config)
    except GuardConfigError as err:
        raise pytest.UsageError(f'mate-guard: {err}') from None
    if not settings.get('enabled'):
        return
    if _xdist_controller(config) and not os.environ.get(XDIST_DIR):
        import tempfile

        os.environ[XDIST_DIR] = tempfile.mkdtemp(prefix='mate-guard-xdist-')
        config._mate_guard_xdist_dir = os.environ[XDIST_DIR]
    try:
        _guard = _Guard(config, settings)
    except (RuntimeError, GuardConfigError) as err:
        raise pytest.UsageError(str(err)) from None
    _note_worker_start(config)


def _graph_case(item):
    if item.get_closest_marker('guard_incompatible') or item.get_closest_marker('graph_capture'):
        return True
    callspec = getattr(item, 'callspec', None)
    return callspec is not None and callspec.params.get('use_graph') is True


@pytest.hookimpl(trylast=True)  # after -k / -m deselection
def pytest_collection_modifyitems(config, items):
    if _guard is None:
        return
    only = _role.only()
    if only is not None:  # a process started for some of a run's tests: those only
        dropped = [i for i in items if i.nodeid not in only]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = [i for i in items if i.nodeid in only]
    for item in items:
        if _graph_case(item):
            item.add_marker(pytest.mark.skip(reason=GRAPH_REASON))


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session):
    if _guard is not None:
        # pytest's faulthandler plugin installed its handler after ours (pytest_configure): a guard fault while
        # the test modules are imported must reach ours first, or it is reported as a signal faulthandler raised.
        _host.keep_fault_handler_first()


@pytest.hookimpl(tryfirst=True)  # before the terminal reporter's (trylast): its session header
def pytest_sessionstart(session):
    if _guard is not None:
        _guard.begin_session(session)


@pytest.hookimpl(tryfirst=True)  # before the terminal reporter prints it
def pytest_internalerror(excrepr, excinfo):
    if _guard is not None and _guard.resumed is not None:
        _guard.say_resumed(_guard.config)


def pytest_collection_finish(session):
    if _guard is not None:
        _guard.check_collection()
        _guard.arm_continuation()


def _note_worker_start(config):
    """An xdist worker says where it files reports, so that the controller
    can count them should it die (a fault) before writing its counts."""
    wid = _xdist_worker(config)
    folder = os.environ.get(XDIST_DIR)
    if _guard is None or not wid or not folder or not os.path.isdir(folder):
        return
    with open(os.path.join(folder, f'started-{wid}-{os.getpid()}.json'), 'w', encoding='utf-8') as f:
        json.dump({'reportDir': _guard.lib.report_dir}, f)


def _dead_worker(folder, started):
    """The summary of a worker that started and wrote no counts (it died at
    a fault): its reports, filed before it died, and the allocation count the
    last of them carries."""
    wid, pid = os.path.basename(started)[len('started-') : -len('.json')].rsplit('-', 1)
    if os.path.exists(os.path.join(folder, f'counts-{wid}-{pid}.json')):
        return None
    with open(started, encoding='utf-8') as f:
        report_dir = json.load(f).get('reportDir')
    try:
        names = os.listdir(report_dir or '')
    except OSError:
        names = []
    read = [(path, _library.read_event(path)) for path in _library.event_files(report_dir, names, {int(pid)})]
    return _events_summary(report_dir, [(path, e) for path, e in read if e])  # one it cannot read: not counted


def _events_summary(report_dir, events):
    """The summary of a process that died (a fault) from the reports it filed, `events` ((file, event) pairs):
    one violation each, and the allocation counts the last of them carries."""
    allocations = max([(e.get('process') or {}).get('allocations', 0) or 0 for _, e in events] or [0])
    # Its host counters as the last host report left them (a device report's
    # are the device guard's): numpy's arrays are the host allocations that
    # are not the native heap's, so the "guarded:" line agrees with the summary.
    host = [e.get('process') or {} for _, e in events if e.get('backend') != 'cuda']
    proc = max(host, key=lambda p: p.get('allocations', 0) or 0, default={})
    native = proc.get('nativeAllocations', 0) or 0
    return {
        'stats': {
            'allocations': allocations,
            'violations': len(events),
            'peakLive': proc.get('peakLive', 0) or 0,
            'fallbacks': proc.get('fallbacks', 0) or 0,
        },
        'host': {
            'nativeAllocations': native,
            'numpy': {'allocations': max((proc.get('allocations', 0) or 0) - native, 0)},
        },
        'processes': 1,
        'reportDirs': [report_dir] if events and report_dir else [],
        # Its canary damage is rerun by the controller as a live worker's is.
        'reports': [[path, e['test']] for path, e in events if isinstance(e.get('test'), str)],
    }


def _write_worker_counts(config):
    """An xdist worker's counts, for the controller's summary (also from a worker about to end itself)."""
    wid = _xdist_worker(config)
    folder = os.environ.get(XDIST_DIR)
    if _guard is None or not wid or not folder or not os.path.isdir(folder):
        return
    with open(os.path.join(folder, f'counts-{wid}-{os.getpid()}.json'), 'w', encoding='utf-8') as f:
        json.dump(
            dict(
                _guard.own_summary(),
                lost=[[wid, n] for n in ([_guard.lost_in] if _guard.lost_in else [])],
                # (event file, node id) of each report, for the controller's one-step reruns
                reports=[[r.file, r.test] for r in _guard.reports if r.file and r.test],
            ),
            f,
        )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    if _guard is None:
        return None
    if _guard.resumed is not None and _guard.replay(item):
        return True
    if _guard.log is not None:
        _guard.log.start(item.nodeid, item.location)
    if _guard.end_worker:
        # xdist: this worker's CUDA context is lost; xdist replaces it.
        _write_worker_counts(item.config)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(3)
    if _guard.lost_in is not None:
        if _guard.continued is None:
            _continue(item)
        return True  # run by the fresh process
    _guard.mark('test')
    _guard.lib.set_current_test(item.nodeid)
    return None


def _continue(item):
    """After a lost CUDA context: the tests left run in a fresh process, whose
    reports are this run's (it continues the same way after its own loss)."""
    session = item.session
    rest = session.items[session.items.index(item) :]
    tr = item.config.pluginmanager.get_plugin('terminalreporter')
    if tr is not None:
        tr.write_line(
            f'[mate-guard] the CUDA context was lost in {_guard.lost_in}: the {plural(len(rest), "test")} left '
            'run in a fresh process'
        )
    result = _subrun.run(item.config, [i.nodeid for i in rest])
    _subrun.replay(item.config, result.reports)
    _guard.continued = result.summary or dict(_zero_summary(), processes=1)
    ran = {r.nodeid for r in result.reports}
    missing = [i.nodeid for i in rest if i.nodeid not in ran]
    if missing:
        # Never silent: the fresh process ended before these (it crashed, or could not start).
        session.testsfailed += 1
        if tr is not None:
            tr.write_line(
                f'[mate-guard] error: the fresh process (exit {result.code}) did not run {plural(len(missing), "test")}: '
                f'{", ".join(missing[:5])}{" ..." if len(missing) > 5 else ""}; its output:\n'
                f'{result.log[-3000:]}',
                red=True,
            )


def _rerun_blocking(item):
    """A kernel exception without launch blocking: the test again, alone, in a
    fresh process with launch blocking, so its report names the exact launch.
    The rerun's failure text, or why there is none."""
    import time

    start = time.monotonic()
    result = _subrun.run(
        item.config, [item.nodeid], ['--guard-launch-blocking', '--no-guard-rerun'], env={_subrun.RERUN_ENV: '1'}
    )
    seconds = time.monotonic() - start
    _guard.reruns.append([item.nodeid, round(seconds, 2)])
    failed = [r for r in result.reports if r.failed]
    if not failed:
        return (
            f'[mate-guard] the rerun of {item.nodeid} with launch blocking ({seconds:.1f} s) did not fault '
            f'(exit {result.code}): the fault depends on timing or on earlier tests'
        )
    text = '\n'.join(str(r.longrepr) for r in failed)
    return f'[mate-guard] rerun of {item.nodeid} alone with launch blocking ({seconds:.1f} s):\n{text}'


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem, report, sched):
    """xdist's controller: a crash that was a worker ending itself after a lost CUDA context."""
    node = getattr(report, 'node', None)
    wid = getattr(getattr(node, 'gateway', None), 'id', None)
    marker = os.path.join(os.environ.get(XDIST_DIR, ''), f'lost-{wid}')
    if not wid or not os.environ.get(XDIST_DIR) or not os.path.exists(marker):
        return
    with open(marker) as f:
        lost_in = f.read()
    os.remove(marker)
    if _guard is not None:
        _guard.worker_lost.append((wid, lost_in))
    # The test it was given next never started: run it again elsewhere, and
    # count this report as nothing (a passed setup).
    if hasattr(sched, 'mark_test_pending'):
        sched.mark_test_pending(crashitem)
    report.outcome = 'passed'
    report.when = 'setup'
    report.longrepr = None
    tr = node.config.pluginmanager.get_plugin('terminalreporter')
    if tr is not None:
        tr.write_line(
            f'[mate-guard] worker {wid} lost its CUDA context in {lost_in}: it is replaced, and {crashitem} runs on a fresh worker'
        )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    if _guard is not None:
        _guard.mark('call')
    yield
    if _guard is None:
        return
    reports = _guard.check(item, 'call')
    item._mate_guard_call = reports
    if (
        _guard.lost_in == item.nodeid
        and _guard.settings.get('rerun')
        and not _guard.settings.get('launch_blocking')
        and not _role.rerun
    ):
        item._mate_guard_rerun = _rerun_blocking(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield
    if _guard is None:
        return
    item._mate_guard_teardown = _guard.check(item, 'teardown')
    _guard.lib.set_current_test('')
    if _guard.lost_in is not None and _xdist_worker(item.config) and os.environ.get(XDIST_DIR):
        with open(os.path.join(os.environ[XDIST_DIR], f'lost-{_xdist_worker(item.config)}'), 'w') as f:
            f.write(_guard.lost_in)
        _guard.end_worker = True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    reports = getattr(item, f'_mate_guard_{rep.when}', None)
    if not reports:
        return
    text = '\n'.join(r.text for r in reports)
    if rep.failed:
        rep.sections.append(('mate-guard', text))
    else:
        rep.outcome = 'failed'
        rep.longrepr = text
    rerun = getattr(item, '_mate_guard_rerun', None) if rep.when == 'call' else None
    if rerun:
        rep.sections.append(('mate-guard: launch-blocking rerun', rerun))


def pytest_runtest_logreport(report):
    if _guard is None:
        return
    if report.skipped and GRAPH_REASON in str(report.longrepr):
        _guard.skipped += 1
        import mate_guard

        mate_guard.skipped_by_tag = _guard.skipped
    if _guard.recorder:  # a fresh process's reports, its own and those it replayed, go to its parent
        _guard.recorder.report(report)
    if _guard.log is not None:  # for the process that takes this one's place after a fault
        _guard.log.report(_guard.config, report)


def _run_summary(config):
    """The run's counts: this process and the fresh ones it continued in, or
    under xdist's controller every worker's, replaced ones included."""
    total = _guard.own_summary()
    folder = getattr(config, '_mate_guard_xdist_dir', None)
    if folder:
        total = _zero_summary()
        for path in sorted(glob.glob(os.path.join(folder, 'counts-*.json'))):
            with open(path, encoding='utf-8') as f:
                _add(total, json.load(f))
        for path in sorted(glob.glob(os.path.join(folder, 'started-*.json'))):
            dead = _dead_worker(folder, path)
            if dead:
                _add(total, dead)
    return total


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    # An xdist worker runs this hook too, into output nobody sees: the summary
    # and the one-step reruns are the controller's (a worker's rerun would
    # start its own workers and count as violations and processes of the run).
    if _guard is None or _xdist_worker(config):
        return
    tr = terminalreporter
    total = _run_summary(config)
    for text in total['late']:
        tr.write_line(text)
    s = total['stats']
    tr.write_line(
        f'[mate-guard] summary: {plural(s["allocations"], "allocation")} guarded, peak live {s["peakLive"]}, '
        f'{plural(s["fallbacks"], "unguarded fallback")}, {plural(s["violations"], "violation")}, '
        f'{plural(_guard.skipped, "test")} skipped by tag'
    )
    from . import guarding, unmatched_glob_warnings

    tr.write_line(f'[mate-guard] {guarding(total["host"], total["numpyState"])}')  # under xdist: the workers'
    for line in unmatched_glob_warnings(total['host'].get('nativeUnmatched') or []):
        tr.write_line(line, yellow=True)
    if s['violations'] and total['reportDirs']:
        tr.write_line(f"[mate-guard] report files (JSON, every process's): {', '.join(total['reportDirs'])}")
    if s['fallbacks']:
        tr.write_line(
            f'[mate-guard] warning: {plural(s["fallbacks"], "allocation")} ran unguarded: {s.get("fallbackReason")}'
        )
    if getattr(config, '_mate_guard_xdist_dir', None):
        # Said by every worker that lost its context, whether or not it had tests left (and so was replaced).
        replaced = {tuple(w) for w in _guard.worker_lost}
        for wid, lost_in in total['lost']:
            tr.write_line(
                f'[mate-guard] worker {wid} lost its CUDA context in {lost_in}'
                + (' (replaced by a fresh worker)' if (wid, lost_in) in replaced else '')
            )
        tr.write_line(
            f'[mate-guard] {total["processes"]} worker process{"" if total["processes"] == 1 else "es"}, replaced ones included'
        )
    elif total['lost']:
        tr.write_line(
            f'[mate-guard] {total["processes"]} processes: the CUDA context was lost in '
            f'{", ".join(total["lost"])}; the tests after each ran in a fresh process'
        )
    if total['faulted']:
        tr.write_line(
            f'[mate-guard] {total["processes"]} processes: a fault on guarded memory ended the one running '
            f'{", ".join(total["faulted"])}; pytest went on in a fresh process after each'
        )
    if total['reruns']:
        secs = sum(r[1] for r in total['reruns'])
        tr.write_line(
            f'[mate-guard] launch-blocking rerun: {plural(len(total["reruns"]), "test")} '
            f'({", ".join(r[0] for r in total["reruns"])}), {secs:.1f} s'
        )
    if _guard.settings.get('rerun'):
        from ._format import Report
        from ._rerun import rerun

        # Under xdist the reports are the workers' (their event files).
        reports = (
            [Report(None, None, f, t, False) for f, t in total['reports']]
            if getattr(config, '_mate_guard_xdist_dir', None)
            else _guard.reports
        )
        rerun(config, reports, tr.write_line, _guard.settings.get('alignment'))


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    if _guard is None:
        return
    _guard.disarm_continuation()  # the tests are done: a later fault ends the process (FAULT_NOTE)
    if _guard.resumed is not None:
        _guard.say_resumed(session.config)  # said before the summary, also where no test of its own ran
        tr = session.config.pluginmanager.get_plugin('terminalreporter')
        _continuation.start_back(session.config, tr, _guard.started)  # before junitxml writes (its sessionfinish)
    from . import _new_reports

    late = [] if _guard.lost_in else _new_reports('the end of the session')
    _guard.late += late
    _guard.reports += late
    # A violation the tests' results do not show yet (one at the session's end, here or in a fresh process) still fails the run.
    # xdist's controller: its workers' counts too (a worker's violation its test's result may not show).
    summary = _run_summary(session.config) if getattr(session.config, '_mate_guard_xdist_dir', None) else None
    violations = _guard.own_summary()['stats']['violations'] + (summary['stats']['violations'] if summary else 0)
    if (_guard.reports or violations) and session.exitstatus == 0:
        session.exitstatus = 1
    if _guard.recorder:
        _guard.recorder.summary(_guard.own_summary())
    _write_worker_counts(session.config)


def pytest_unconfigure(config):
    folder = getattr(config, '_mate_guard_xdist_dir', None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)
    if _guard is not None and (_guard.log or _guard.resumed):
        # The run ends in this process: nothing will replace it.
        shutil.rmtree((_guard.log or _guard.resumed).folder, ignore_errors=True)
