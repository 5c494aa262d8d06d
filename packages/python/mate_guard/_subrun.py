"""pytest in a fresh process for some of the session's tests: the tests
left after a lost CUDA context (a process cannot recover its context), and
the launch-blocking rerun of a test whose kernel faulted. The child runs
the same command line (same rootdir, ini, plugins) restricted to the given
node ids, and writes its test reports (pytest's own serialization, as
pytest-xdist sends them) and its guard summary to a file; the parent
replays the reports through its hooks, so its terminal, junitxml, cache
and exit status see them as its own."""

import json
import os
import subprocess
import sys
import tempfile
import time

from . import _continuation

ONLY_ENV = 'MATE_PYTEST_ONLY'  # a JSON file: the node ids the child runs
RESULTS_ENV = 'MATE_PYTEST_RESULTS'  # a JSONL file the child writes: reports, then its summary
RERUN_ENV = 'MATE_PYTEST_RERUN'  # set in a launch-blocking rerun (it reruns nothing itself)


class Role:
    """What this process was started for, read once and taken out of the
    environment (the processes its tests start must not inherit it)."""

    def __init__(self):
        self._only = os.environ.pop(ONLY_ENV, None)
        self.results = os.environ.pop(RESULTS_ENV, None)
        self.rerun = os.environ.pop(RERUN_ENV, None) is not None
        # The folder of a run this process goes on with, having replaced its process after a fault (_continuation.py).
        self.resumed = os.environ.pop(_continuation.ENV, None)

    @property
    def child(self):
        return self._only is not None

    def only(self):
        """The node ids to run, or None: all."""
        if self._only is None:
            return None
        with open(self._only, encoding='utf-8') as f:
            return set(json.load(f))


class Recorder:
    """The child's side: every test report, then the summary, to its parent's results file."""

    def __init__(self, config, path):
        self.config = config
        self.path = path

    def __bool__(self):
        return bool(self.path)

    def report(self, report):
        data = self.config.hook.pytest_report_to_serializable(config=self.config, report=report)
        self._write({'report': data})

    def summary(self, summary):
        self._write({'summary': summary})

    def _write(self, obj):
        with open(self.path, 'a', encoding='utf-8') as f:
            f.write(json.dumps(obj) + '\n')


class Result:
    def __init__(self, reports, summary, code, seconds, log):
        self.reports, self.summary, self.code, self.seconds, self.log = reports, summary, code, seconds, log


def run(config, nodeids, extra_args=(), env=None):
    """Runs `nodeids` in a fresh pytest process; its Result (reports deserialized)."""
    tmp = tempfile.mkdtemp(prefix='mate-pytest-sub-')
    only = os.path.join(tmp, 'only.json')
    results = os.path.join(tmp, 'results.jsonl')
    with open(only, 'w', encoding='utf-8') as f:
        json.dump(list(nodeids), f)
    args = list(config.invocation_params.args)
    if config.pluginmanager.hasplugin('xdist'):
        args += ['-n', '0']  # one process of its own, whatever -n the run had
    # A basetemp of its own: pytest empties a given one at start, under the parent's running tests.
    # (The cache it writes is overwritten by the parent's, which saw every report, at the run's end.)
    args += [f'--basetemp={os.path.join(tmp, "basetemp")}', *extra_args]
    child_env = dict(os.environ, **(env or {}))
    child_env[ONLY_ENV] = only
    child_env[RESULTS_ENV] = results
    for name in ('PYTEST_XDIST_WORKER', 'PYTEST_XDIST_WORKER_COUNT', 'PYTEST_XDIST_TESTRUNUID'):
        child_env.pop(name, None)
    start = time.monotonic()
    with open(os.path.join(tmp, 'output.log'), 'w+b') as log:
        # Its terminal output is not shown: its reports are, through the parent.
        code = subprocess.call(
            [sys.executable, '-m', 'pytest', *args],
            cwd=str(config.invocation_params.dir),
            env=child_env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        log.seek(0)
        text = log.read().decode(errors='replace')
    seconds = time.monotonic() - start
    reports, summary = [], None
    if os.path.exists(results):
        with open(results, encoding='utf-8') as f:
            for line in f:
                obj = json.loads(line)
                if 'report' in obj:
                    reports.append(deserialize(config, obj['report']))
                elif 'summary' in obj:
                    summary = obj['summary']
    return Result(reports, summary, code, seconds, text)


def deserialize(config, data):
    """A report from pytest's serialization (Recorder, _continuation.Log)."""
    rep = config.hook.pytest_report_from_serializable(config=config, data=data)
    if rep.skipped and isinstance(rep.longrepr, list):  # JSON made pytest's (path, line, reason) a list
        rep.longrepr = tuple(rep.longrepr)
    return rep


def replay(config, reports):
    """The child's reports through this process's hooks, as if its own tests had made them."""
    current = location = None
    for rep in reports:
        if rep.nodeid != current:
            if current is not None:
                config.hook.pytest_runtest_logfinish(nodeid=current, location=location)
            current, location = rep.nodeid, rep.location
            config.hook.pytest_runtest_logstart(nodeid=current, location=location)
        config.hook.pytest_runtest_logreport(report=rep)
    if current is not None:
        config.hook.pytest_runtest_logfinish(nodeid=current, location=location)
