# Records each test file's time (setup + call + teardown of its tests, the
# guard's end-of-test work included) and the teardown share, per process,
# into $SMALL_TESTS_OUT/times-<pid>.json for bench/cuda/small_tests/run.sh.
import json
import os
import time

import pytest

_files = {}


def _entry(nodeid):
    return _files.setdefault(nodeid.split('::', 1)[0], {'tests': 0, 'seconds': 0.0, 'teardown': 0.0})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    t = time.perf_counter()
    yield
    e = _entry(item.nodeid)
    e['tests'] += 1
    e['seconds'] += time.perf_counter() - t


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    t = time.perf_counter()
    yield
    _entry(item.nodeid)['teardown'] += time.perf_counter() - t


def pytest_sessionfinish(session):
    out = os.environ.get('SMALL_TESTS_OUT')
    if out and _files:
        with open(os.path.join(out, f'times-{os.getpid()}.json'), 'w') as f:
            json.dump(_files, f)
