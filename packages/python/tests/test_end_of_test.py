"""What the plugin does at each test's end for device memory: allocations the
test dropped are freed before its check, so canary damage found at their
free fails the test that made it, also when they sit in reference cycles
(young, or aged into the oldest generation while the test held them)."""

import re

SUITE = '''
import gc
import cabi


class Tensor:
    """Device memory owned by an object in a reference cycle (as autograd graphs and tracebacks make)."""

    def __init__(self, size):
        self.ptr = cabi.alloc(size)
        self.me = self

    def __del__(self):
        cabi.free(self.ptr)


def test_young_cycle_overrun():
    t = Tensor(100)
    cabi.write(t.ptr, 100)  # one byte past the end: canary slack
    del t


def test_old_cycle_overrun():
    t = Tensor(100)
    cabi.write(t.ptr, 100)
    gc.collect()  # t survives a full collection while held: now in the oldest generation
    del t


def test_clean_after():
    t = Tensor(64)
    del t


def test_keeps_its_memory():
    global KEPT
    KEPT = Tensor(64)
'''


def test_dropped_device_memory_in_cycles_is_checked_in_the_test_that_made_it(project):
    project.write('test_cycles.py', SUITE)
    r = project.pytest(['--guard-alloc', '-p', 'no:randomly'])
    assert r.code == 1, r
    for name in ('test_young_cycle_overrun', 'test_old_cycle_overrun'):
        assert re.search(
            rf'^FAILED test_cycles\.py::{name} - ==mate-guard== ERROR: canary-corruption', r.stdout, re.M
        ), r
    assert '2 failed, 2 passed' in r.stdout, r
    assert re.search(r'^\[mate-guard\] summary: 4 allocations guarded, .*2 violations', r.stdout, re.M), r


FREES = """
import cabi


def test_many_frees_one_overrun():
    ptrs = [cabi.alloc(100 + i) for i in range(12)]
    cabi.write(ptrs[5], 105)  # one byte past the sixth one's end: canary slack
    for p in ptrs:
        cabi.free(p)


def test_clean_next():
    ptrs = [cabi.alloc(64) for _ in range(12)]
    for p in ptrs:
        cabi.free(p)
"""


def test_frees_that_do_not_wait_for_the_device_are_checked_at_the_end_of_the_test_that_freed(project):
    # Without sync-on-free a free only queues its check: the test's end
    # checks every pending free, so the damage fails the test that freed,
    # never the next one. With it (the plugin's default) the free checks.
    project.write('test_frees.py', FREES)
    for flags in (['--no-guard-sync-on-free'], []):
        r = project.pytest(['--guard-alloc', '-p', 'no:randomly', *flags])
        assert r.code == 1, r
        assert re.search(
            r'^FAILED test_frees\.py::test_many_frees_one_overrun - ==mate-guard== ERROR: canary-corruption',
            r.stdout,
            re.M,
        ), r
        assert '1 failed, 1 passed' in r.stdout, r
        assert re.search(r'^\[mate-guard\] summary: 24 allocations guarded, .*1 violation', r.stdout, re.M), r
