# Records each test file's time (setup + call + teardown of its tests, the
# guard's end-of-test work included) and the teardown share, per process,
# into $SMALL_TESTS_OUT/times-<pid>.json for bench/cuda/small_tests/run.sh;
# under the guard also the time its end-of-test steps take (the full
# gc.collect() and check_canaries(): synchronize, canary checks, reports),
# and each test's own time in the order this process ran them (a process's
# first test pays its one-off start: CUDA context, kernels loaded).
import gc
import json
import os
import time

import pytest

_files = {}
_tests = []  # [node id, seconds] in the order this process ran them
_spent = {'gc.collect': 0.0, 'gc.collects': 0, 'check_canaries': 0.0, 'checks': 0}


def _timed(fn, key, count, default_args=()):
    def wrapper(*args, **kwargs):
        args = args or default_args
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            _spent[key] += time.perf_counter() - t
            _spent[count] += 1

    return wrapper


def pytest_configure(config):
    if not config.getoption('mate_guard_enabled', None) and not os.environ.get('MATE_PYTEST_GUARD_ALLOC'):
        return
    import mate_guard

    # The plugin looks both up at call time (gc.collect, `from . import check_canaries`).
    # SMALL_TESTS_GC_GENERATION: what-if variant (run.sh's guard-gc<N>): the
    # plugin's full collections limited to that generation.
    gen = os.environ.get('SMALL_TESTS_GC_GENERATION')
    gc.collect = _timed(gc.collect, 'gc.collect', 'gc.collects', (int(gen),) if gen else ())
    mate_guard.check_canaries = _timed(mate_guard.check_canaries, 'check_canaries', 'checks')


# SMALL_TESTS_ROUNDTRIP=1 (run.sh's plain-roundtrip, no guard): each test
# ends with what a check at its end needs at the least, one wait for the
# GPU and a copy of a few bytes back: the floor of checking canaries per
# test when workers share the GPU (each wait queues behind their work).
if os.environ.get('SMALL_TESTS_ROUNDTRIP') == '1':
    _probe = []

    @pytest.fixture(autouse=True)
    def _one_readback():
        yield
        import torch

        if not _probe:
            _probe.append(torch.zeros(64, dtype=torch.uint8, device='cuda'))
        torch.cuda.synchronize()
        _probe[0].cpu()


def _entry(nodeid):
    return _files.setdefault(nodeid.split('::', 1)[0], {'tests': 0, 'seconds': 0.0, 'teardown': 0.0})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    t = time.perf_counter()
    yield
    spent = time.perf_counter() - t
    e = _entry(item.nodeid)
    e['tests'] += 1
    e['seconds'] += spent
    _tests.append([item.nodeid, spent])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    t = time.perf_counter()
    yield
    _entry(item.nodeid)['teardown'] += time.perf_counter() - t


def pytest_sessionfinish(session):
    out = os.environ.get('SMALL_TESTS_OUT')
    if out and _files:
        with open(os.path.join(out, f'times-{os.getpid()}.json'), 'w') as f:
            json.dump({**_files, '_tests': _tests, **({'_guard': _spent} if _spent['checks'] else {})}, f)
