"""One run reports every bug: after a fault that loses the CUDA context (the
simulated driver's sticky illegal address) the tests left run in a fresh
process, and the faulting test is rerun alone with launch blocking."""

import json
import os
import re

SUITE = """
import cabi


def test_a_before():
    cabi.free(cabi.alloc(100))


def test_b_faults():
    cabi.alloc(100)
    cabi.lose_context()


def test_c_overrun():
    p = cabi.alloc(100)
    cabi.write(p, 100)
    cabi.free(p)


def test_d_faults_again():
    cabi.alloc(64)
    cabi.lose_context()


def test_e_last():
    cabi.free(cabi.alloc(32))
"""


def test_every_test_runs_and_every_bug_is_reported_across_the_processes_each_loss_takes(project):
    project.write('test_suite.py', SUITE)
    r = project.pytest(['--guard-alloc', '--no-guard-rerun', '--junitxml', 'junit.xml'])
    assert r.code == 1, r
    assert '3 failed, 2 passed' in r.stdout, r
    for name in ('test_b_faults', 'test_d_faults_again'):
        assert re.search(rf'^FAILED test_suite\.py::{name} - ==mate-guard== ERROR: illegal-address', r.stdout, re.M), r
    assert re.search(
        r'^FAILED test_suite\.py::test_c_overrun - ==mate-guard== ERROR: canary-corruption', r.stdout, re.M
    ), r
    assert (
        '[mate-guard] the CUDA context was lost in test_suite.py::test_b_faults: the 3 tests left run in a fresh process'
        in r.stdout
    ), r
    assert re.search(
        r'^\[mate-guard\] summary: \d+ allocations guarded, .*3 violations, 0 tests skipped by tag$', r.stdout, re.M
    ), r
    assert (
        '[mate-guard] 3 processes: the CUDA context was lost in test_suite.py::test_b_faults, '
        'test_suite.py::test_d_faults_again; the tests after each ran in a fresh process'
    ) in r.stdout, r
    # The run's other consumers see the fresh processes' tests as the run's own.
    junit = (project.dir / 'junit.xml').read_text()
    assert junit.count('<testcase ') == 5, junit
    assert junit.count('<failure ') == 3, junit


def test_a_kernel_exception_is_rerun_alone_with_launch_blocking_and_its_cost_said(project):
    project.write('test_suite.py', SUITE)
    r = project.pytest(['--guard-alloc', '-k', 'a_before or b_faults or e_last'])
    assert r.code == 1, r
    assert '1 failed, 2 passed' in r.stdout, r
    failure = r.stdout.split(' test_b_faults ')[1]
    assert re.search(
        r'-+ mate-guard: launch-blocking rerun -+\n\[mate-guard\] rerun of test_suite\.py::test_b_faults alone '
        r'with launch blocking \([\d.]+ s\):\n==mate-guard== ERROR: ',
        failure,
    ), r
    assert re.search(
        r'^\[mate-guard\] launch-blocking rerun: 1 test \(test_suite\.py::test_b_faults\), [\d.]+ s$', r.stdout, re.M
    ), r


def test_no_rerun_when_launch_blocking_is_on_or_rerun_is_off(project):
    project.write('test_suite.py', SUITE)
    for args, env in ((['--guard-launch-blocking'], {}), ([], {'MATE_PYTEST_GUARD_RERUN': 'off'})):
        r = project.pytest(['--guard-alloc', '-k', 'b_faults or e_last', *args], env=env)
        assert r.code == 1, r
        assert '1 failed, 1 passed' in r.stdout, r
        assert 'launch-blocking rerun' not in r.stdout, r


ISOLATION = """
import os
import cabi


def test_a_faults(tmp_path):
    (tmp_path / 'mine').write_text('kept')
    cabi.alloc(100)
    cabi.lose_context()


def test_b_in_the_fresh_process(tmp_path):
    # What made this process a fresh one for its parent is not passed on to what its tests start.
    assert not [k for k in os.environ if k in ('MATE_PYTEST_ONLY', 'MATE_PYTEST_RESULTS', 'MATE_PYTEST_RERUN')]
    (tmp_path / 'mine').write_text('child')
"""


def test_a_fresh_process_keeps_out_of_the_runs_basetemp_and_passes_nothing_on(project):
    project.write('test_iso.py', ISOLATION)
    r = project.pytest(['--guard-alloc', '--basetemp', 'bt'])
    assert r.code == 1, r
    assert '1 failed, 1 passed' in r.stdout, r
    # pytest empties a given basetemp when a session starts: the fresh processes (the rerun, the
    # continuation) have their own, so the run's tmp_path folders are still there.
    kept = list((project.dir / 'bt').glob('test_a_faults[0-9]*/mine'))
    assert [p.read_text() for p in kept] == ['kept'], r
    assert re.search(
        r'^\[mate-guard\] report files \(JSON, every process\'s\): ' + re.escape(str(project.reports)) + '$',
        r.stdout,
        re.M,
    ), r


# A fake kernel through the simulated driver and CUPTI (fake_launch): it
# faults when it runs, so under launch blocking the guard's synchronize
# right after it sees the fault at that launch (as a GPU does).
KERNEL = """
import ctypes, json, os
import cabi


class FakeFunc(ctypes.Structure):
    _fields_ = [('name', ctypes.c_char_p), ('n', ctypes.c_int), ('sizes', ctypes.c_size_t * 16)]


FILL = FakeFunc(b'_ZN12_GLOBAL__N_113FillInclusiveEPfl', 2, (ctypes.c_size_t * 16)(8, 8))


def fill_inclusive(p, n):
    drv = cabi._driver()
    if (json.loads(os.environ['MATE_GUARD_SETTINGS']).get('settings') or {}).get('launchBlocking'):
        drv.fake_cuda_set_error(700)
    ptr, count = ctypes.c_void_p(p), ctypes.c_long(n)
    params = (ctypes.c_void_p * 2)(ctypes.cast(ctypes.byref(ptr), ctypes.c_void_p), ctypes.cast(ctypes.byref(count), ctypes.c_void_p))
    drv.fake_launch(ctypes.byref(FILL), None, params)
    drv.fake_cuda_set_error(700)


def test_kernel_faults():
    x = cabi.alloc(4000)
    fill_inclusive(x, 1000)  # the user's line
"""


def test_the_reruns_report_names_the_exact_launch_its_argument_and_the_users_line(project):
    project.write('test_kernel.py', KERNEL)
    r = project.pytest(['--guard-alloc'])
    assert r.code == 1, r
    first, rerun = r.stdout.split('mate-guard: launch-blocking rerun')
    assert 'seen by the synchronize after the launch (launch blocking)' in rerun, r
    assert '==mate-guard== test: test_kernel.py::test_kernel_faults' in rerun, r

    # Each process's event (the printed report may be the full one, or the
    # fallback naming its file): the run's first, then the rerun's.
    events = [
        json.loads(f.read_text()) for f in sorted(project.reports.rglob('mate-guard-*.json'), key=os.path.getmtime)
    ]
    events = [e for e in events if e.get('launches')]
    assert len(events) == 2, events

    # Without launch blocking the run knows only the kernels in flight; the rerun knows the one that faulted.
    assert events[0]['launches']['blocking'] is False
    launches = events[1]['launches']
    assert launches['blocking'] is True, launches
    [faulted] = [x for x in launches['list'] if x.get('faulted')]
    # As the driver names it, or demangled where the report printer (Node) ran and symbolized the event.
    assert faulted['kernel'] in ('_ZN12_GLOBAL__N_113FillInclusiveEPfl', '(anonymous namespace)::FillInclusive'), (
        faulted
    )
    assert [a['allocation']['size'] for a in faulted['args']] == [4000]
    line = next(i for i, t in enumerate(KERNEL.split('\n'), 1) if "the user's line" in t)
    assert re.search(rf'^ *at test_kernel_faults \(.*test_kernel\.py:{line}\)$', faulted['site'], re.M), faulted['site']
