"""pytest plugin (entry point `mate_guard`): `pytest --guard-alloc` guards
the test process's host memory (numpy arrays; with --guard-native, the
native heap of chosen extension modules) and its CUDA device memory where
there is a GPU. Inactive unless asked: by a
flag (also through addopts / PYTEST_ADDOPTS), MATE_PYTEST_GUARD_ALLOC or
the ini key guard_alloc; flag > environment > ini > off, per setting. The
flags, variables and ini keys come from the settings table (settings.json)."""
import gc
import os

import pytest

from . import _library
from ._settings import ROWS, GuardConfigError, parse, suggestion

GRAPH_REASON = 'guard allocator debug mode does not support graph capture'
MARKERS = {
    'guard_incompatible': 'skipped under --guard-alloc (mate-guard): the test cannot run on the guard allocator',
    'graph_capture': 'skipped under --guard-alloc (mate-guard): the test captures CUDA graphs, which the guard refuses',
}
ENV_PREFIX = 'MATE_PYTEST_GUARD_'


def _sp(row, what):
    return row['spellings'][what]


def _dest(row):
    return 'mate_guard_' + _sp(row, 'pythonKey')


def pytest_addoption(parser):
    group = parser.getgroup('mate-guard', 'mate-guard: host and CUDA device memory guard')
    for row in ROWS:
        flag = _sp(row, 'pytestFlag')
        help = f'{row["description"]} (env {_sp(row, "pytestEnv")}, ini {_sp(row, "pytestIni")}, default {row["defaultText"]})'
        help = help.replace('%', '%%')
        if row['value']['type'] == 'boolean':
            group.addoption(flag, action='store_true', dest=_dest(row), default=None, help=help)
            group.addoption('--no-' + flag[2:], action='store_false', dest=_dest(row), default=None,
                            help=f'turn {flag} off')
        else:
            # Values parsed here, not by argparse: one wording for flags, variables and ini.
            group.addoption(flag, dest=_dest(row), default=None, metavar=row['placeholder'], help=help)
        parser.addini(_sp(row, 'pytestIni'), help=help, default=None)


def _known_flags():
    out = []
    for row in ROWS:
        out.append(_sp(row, 'pytestFlag'))
        if row['value']['type'] == 'boolean':
            out.append('--no-' + _sp(row, 'pytestFlag')[2:])
    return out


def _refuse_misspellings(args, inicfg):
    """A misspelled guard setting stops the session before collection, with the nearest spelling."""
    flags = _known_flags()
    for arg in args:
        name = arg.split('=', 1)[0]
        if (name.startswith('--guard-') or name.startswith('--no-guard-')) and name not in flags:
            raise pytest.UsageError(f'mate-guard: unknown option "{name}"{suggestion(name, flags)}')
    envs = [_sp(r, 'pytestEnv') for r in ROWS]
    for name in sorted(os.environ):
        if name.startswith(ENV_PREFIX) and name not in envs:
            raise pytest.UsageError(f'mate-guard: unknown environment variable "{name}"{suggestion(name, envs)}')
    inis = [_sp(r, 'pytestIni') for r in ROWS]
    for name in sorted(inicfg or {}):
        if name.startswith('guard_') and name not in inis:
            raise pytest.UsageError(f'mate-guard: unknown ini option "{name}"{suggestion(name, inis)}')


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    _refuse_misspellings(args, getattr(early_config, 'inicfg', None))


def _ini(config, row):
    try:
        value = config.getini(_sp(row, 'pytestIni'))
    except ValueError:
        return None
    if isinstance(value, list):  # an ini key pytest read as lines
        value = ','.join(value)
    return value if value not in (None, '') else None


def resolve(config):
    """Every Python setting: flag > MATE_PYTEST_GUARD_* > ini > the table's default."""
    out = {}
    for row in ROWS:
        key = _sp(row, 'pythonKey')
        flag = config.getoption(_dest(row))
        env = os.environ.get(_sp(row, 'pytestEnv'))
        ini = _ini(config, row)
        proc = os.environ.get(row['processEnv']) if row['processEnv'] else None
        if flag is not None:
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
        out[key] = parse(row, value, where)
    return out


class _Guard:
    """The guard of one pytest process: brackets tests, turns findings into failures."""

    def __init__(self, config, settings):
        from . import GuardAllocatorConfig, install_guard_allocator
        self.config = config
        self.settings = settings
        fields = {k: v for k, v in settings.items() if k != 'enabled'}
        # A test to fail: a free checks its canary at once (the Node runners' default).
        if fields.get('sync_on_free') is None:
            fields['sync_on_free'] = True
        from . import _host
        _host.report_fd = os.dup(2)  # the terminal's stderr (pytest captures fd 2 during tests)
        install_guard_allocator(GuardAllocatorConfig(**fields))
        self.lib = _library.load()
        self.lost_in = None  # node id of the test whose fault lost the CUDA context
        self.reports = []  # every report of the session
        self.late = []  # reports made outside any test (collection, the session's end)
        self.skipped = 0

    def check(self, item, when):
        # Host blocks made in the test are checked whether or not they were
        # freed: a full collection (100+ ms on a large heap, per test) is
        # needed only for device memory, whose check runs at its free.
        from . import check_canaries, device_guarded
        if self.lost_in is not None:  # nothing more can be asked of a lost context
            return []
        if device_guarded():
            gc.collect()  # frees the test's dropped tensors now: their checks (at free) belong to it
        reports = check_canaries(f'the end of test {item.nodeid}' if when != 'setup' else f'the setup of {item.nodeid}')
        self.reports += reports
        if any(r.context_lost for r in reports) and self.lost_in is None:
            self.lost_in = item.nodeid
        return reports


_guard = None


def pytest_configure(config):
    global _guard
    for name, text in MARKERS.items():
        config.addinivalue_line('markers', f'{name}: {text}')
    try:
        settings = resolve(config)
    except GuardConfigError as err:
        raise pytest.UsageError(f'mate-guard: {err}') from None
    if not settings.get('enabled'):
        return
    if _xdist_worker(config) is None and getattr(config.option, 'numprocesses', None) and not os.environ.get(XDIST_DIR):
        # xdist's controller: where workers that lost their CUDA context say so (inherited by the workers).
        import tempfile
        os.environ[XDIST_DIR] = tempfile.mkdtemp(prefix='mate-guard-xdist-')
    try:
        _guard = _Guard(config, settings)
    except (RuntimeError, GuardConfigError) as err:
        raise pytest.UsageError(str(err)) from None


def _graph_case(item):
    if item.get_closest_marker('guard_incompatible') or item.get_closest_marker('graph_capture'):
        return True
    callspec = getattr(item, 'callspec', None)
    return callspec is not None and callspec.params.get('use_graph') is True


@pytest.hookimpl(trylast=True)  # after -k / -m deselection: the count is of tests that would have run
def pytest_collection_modifyitems(config, items):
    if _guard is None:
        return
    for item in items:
        if _graph_case(item):
            item.add_marker(pytest.mark.skip(reason=GRAPH_REASON))
            _guard.skipped += 1


# pytest-xdist: a worker whose CUDA context was lost ends itself before its
# next test, leaving a marker for the controller, which replaces the worker
# (as for any crash) and runs that next test again on the fresh one.
XDIST_DIR = 'MATE_PYTEST_XDIST_DIR'


def _xdist_worker(config):
    inp = getattr(config, 'workerinput', None)
    return inp.get('workerid') if inp else None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    if _guard is not None:
        if getattr(_guard, 'end_worker', False):
            import sys
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(3)
        _guard.lib.set_current_test(item.nodeid)


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
    # The test it was given next never started: run it again elsewhere, and
    # count this report as nothing (a passed setup).
    if hasattr(sched, 'mark_test_pending'):
        sched.mark_test_pending(crashitem)
    report.outcome = 'passed'
    report.when = 'setup'
    report.longrepr = None
    tr = node.config.pluginmanager.get_plugin('terminalreporter')
    if tr is not None:
        tr.write_line(f'[mate-guard] worker {wid} lost its CUDA context in {lost_in}: it is replaced, and {crashitem} runs on a fresh worker')


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    yield
    if _guard is not None:
        item._mate_guard_call = _guard.check(item, 'call')


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
    elif _guard.lost_in is not None:
        rest = item.session.items
        after = len(rest) - rest.index(item) - 1 if item in rest else 0
        if after:
            item.session.shouldstop = (
                f'mate-guard: the CUDA context was lost in {_guard.lost_in}; the {after} test'
                f'{"" if after == 1 else "s"} after it in this process were not run (a process cannot recover its CUDA context)')


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


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _guard is None:
        return
    from . import stats
    for r in _guard.late:
        terminalreporter.write_line(r.text)
    s = stats() or {}
    n = lambda k: s.get(k, 0)  # noqa: E731
    pl = lambda v, w: f'{v} {w}{"" if v == 1 else "s"}'  # noqa: E731
    terminalreporter.write_line(
        f'[mate-guard] summary: {pl(n("allocations"), "allocation")} guarded, peak live {n("peakLive")}, '
        f'{pl(n("fallbacks"), "unguarded fallback")}, {pl(n("violations"), "violation")}, '
        f'{pl(_guard.skipped, "test")} skipped by tag')
    from . import guarding
    terminalreporter.write_line(f'[mate-guard] {guarding()}')
    if n('fallbacks'):
        terminalreporter.write_line(f'[mate-guard] warning: {pl(n("fallbacks"), "allocation")} ran unguarded: {s.get("fallbackReason")}')
    if _guard.lost_in is not None:
        terminalreporter.write_line(f'[mate-guard] the CUDA context was lost in {_guard.lost_in}: later tests in this process were not run')
    if _guard.settings.get('rerun'):
        from ._rerun import rerun
        rerun(config, _guard.reports, terminalreporter.write_line)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    if _guard is None:
        return
    from . import check_canaries
    _guard.late = [] if _guard.lost_in else check_canaries('the end of the session')
    _guard.reports += _guard.late
    # A violation the tests' results do not show yet still fails the run.
    if _guard.reports and session.exitstatus == 0:
        session.exitstatus = 1
