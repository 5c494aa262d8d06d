"""pytest-xdist: each worker's counts reach the controller, whose summary is
the run's, naming the worker that lost its CUDA context. Runs with the
first Python that has xdist (this one, or Debian's python3-pytest-xdist
for /usr/bin/python3); skips saying so when none has it."""

import functools
import re
import shutil
import subprocess
import sys

import pytest


@functools.lru_cache(maxsize=None)
def xdist_python():
    for python in dict.fromkeys([sys.executable, shutil.which('python3'), '/usr/bin/python3']):
        if python and subprocess.run([python, '-c', 'import xdist, pytest'], capture_output=True).returncode == 0:
            return python
    return None


@pytest.fixture
def xpython():
    python = xdist_python()
    if python is None:
        pytest.skip(
            'no Python here has pytest-xdist (pip install pytest-xdist, or apt-get install python3-pytest-xdist)'
        )
    return python


# The case: overrun and underrun tests both fail with violations;
# the summary said "0 violations".
BUGS = """
import cabi


def test_overrun():
    p = cabi.alloc(100)
    cabi.write(p, 100)
    cabi.free(p)


def test_underrun():
    p = cabi.alloc(100)
    cabi.write(p, -1)
    cabi.free(p)


def test_clean_one():
    cabi.free(cabi.alloc(10))


def test_clean_two():
    cabi.free(cabi.alloc(10))
"""


def test_the_controllers_summary_counts_every_workers_allocations_and_violations(project, xpython):
    project.write('test_bugs.py', BUGS)
    r = project.pytest(['-n', '2', '--guard-alloc'], python=xpython)
    assert r.code == 1, r
    assert '2 failed, 2 passed' in r.stdout, r
    assert re.search(
        r'^\[mate-guard\] summary: 4 allocations guarded, .*2 violations, 0 tests skipped by tag$', r.stdout, re.M
    ), r
    assert '0 violations' not in r.stdout, r
    assert re.search(r'^\[mate-guard\] 2 worker processes, replaced ones included$', r.stdout, re.M), r


LOST = """
import pytest
import cabi


def test_a_faults():
    cabi.alloc(100)
    cabi.lose_context()


def test_b_overrun():
    p = cabi.alloc(100)
    cabi.write(p, 100)
    cabi.free(p)


def test_c_after():
    cabi.free(cabi.alloc(10))


@pytest.mark.graph_capture
def test_d_graph():
    pass
"""


def test_a_worker_that_lost_its_context_is_named_and_its_counts_are_kept(project, xpython):
    project.write('test_lost.py', LOST)
    # One worker: every test after the fault runs on its replacement.
    r = project.pytest(['-n', '1', '--guard-alloc', '--no-guard-rerun'], python=xpython)
    assert r.code == 1, r
    assert '2 failed, 1 passed, 1 skipped' in r.stdout, r
    assert re.search(
        r'^\[mate-guard\] worker gw0 lost its CUDA context in test_lost\.py::test_a_faults \(replaced by a fresh worker\)$',
        r.stdout,
        re.M,
    ), r
    assert re.search(
        r'^\[mate-guard\] summary: 3 allocations guarded, .*2 violations, 1 test skipped by tag$', r.stdout, re.M
    ), r
    assert re.search(r'^\[mate-guard\] 2 worker processes, replaced ones included$', r.stdout, re.M), r


# What the handoff hands the device guard: a free's own wait for the GPU
# (syncOnFree) or the test's end checking it.
SYNC = """
import json
import os
import cabi


def test_the_frees_wait():
    cabi.free(cabi.alloc(10))
    settings = json.loads(os.environ['MATE_GUARD_SETTINGS'])['settings']
    assert settings.get('syncOnFree') is (os.environ['SYNC_EXPECTED'] == 'wait'), settings.get('syncOnFree')
"""


@pytest.mark.parametrize(
    'args, expected',
    [([], 'wait'), (['-n', '2'], 'test end'), (['-n', '2', '--guard-sync-on-free'], 'wait')],
    ids=['serial', 'xdist', 'xdist-explicit'],
)
def test_frees_wait_for_the_gpu_in_a_serial_run_and_leave_it_to_the_test_end_in_xdist_workers(
    project, xpython, args, expected
):
    project.write('test_sync.py', SYNC)
    r = project.pytest([*args, '--guard-alloc'], env={'SYNC_EXPECTED': expected}, python=xpython)
    assert r.code == 0, r
    assert '1 passed' in r.stdout, r
