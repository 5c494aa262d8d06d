"""The Python API's exit status: a process that had violations exits with
exit_code (default 1), as sanitizers do; check_canaries() raises on damage."""

import re

SCRIPT = """
import sys
import cabi
import mate_guard
from mate_guard import GuardAllocatorConfig, install_guard_allocator

kwargs = eval(sys.argv[1]) if len(sys.argv) > 1 else {}
install_guard_allocator(GuardAllocatorConfig(sync_on_free=False, **kwargs))
p = cabi.alloc(100)
if 'overrun' in sys.argv:
    cabi.write(p, 100)
try:
    print('check:', mate_guard.check_canaries())
except mate_guard.GuardViolationError as err:
    print('raised:', [r.kind for r in err.reports])
cabi.free(p)
if 'exit3' in sys.argv:
    sys.exit(3)
"""


def test_a_clean_process_exits_0(project):
    project.write('script.py', SCRIPT)
    r = project.python(['script.py', '{}'])
    assert r.code == 0, r
    assert 'check: []' in r.stdout, r


def test_damage_found_at_free_makes_the_process_exit_1_saying_why(project):
    project.write('script.py', SCRIPT)
    r = project.python(['script.py', '{}', 'overrun'])
    assert r.code == 1, r
    assert re.search(
        r'^==mate-guard== 1 violation in this process: exit status 1 \(exit_code; 0 leaves the status alone\)$',
        r.stderr,
        re.M,
    ), r


def test_exit_code_chooses_the_status_and_0_leaves_it_alone(project):
    project.write('script.py', SCRIPT)
    assert project.python(['script.py', "{'exit_code': 42}", 'overrun']).code == 42
    r = project.python(['script.py', "{'exit_code': 0}", 'overrun'])
    assert r.code == 0, r
    assert 'violation in this process' not in r.stderr, r


def test_a_bad_exit_code_is_named(project):
    project.write('script.py', SCRIPT)
    r = project.python(['script.py', "{'exit_code': 300}"])
    assert r.code == 1, r
    assert 'GuardConfigError: exit_code: 300 is not allowed; use an integer from 0 to 255' in r.stderr, r


def test_check_canaries_raises_with_the_reports_on_damage(project):
    # sync_on_free: the free finds the damage at once; check_canaries() hands it over, once.
    project.write(
        'check.py',
        """
import cabi, mate_guard
mate_guard.install_guard_allocator(mate_guard.GuardAllocatorConfig(sync_on_free=True, exit_code=0))
p = cabi.alloc(100)
cabi.write(p, 100)
cabi.free(p)
try:
    mate_guard.check_canaries()
except mate_guard.GuardViolationError as err:
    print('raised:', [r.kind for r in err.reports], isinstance(err, AssertionError))
print('again:', mate_guard.check_canaries())
""",
    )
    r = project.python(['check.py'])
    assert r.code == 0, r
    assert "raised: ['canary-corruption'] True" in r.stdout, r
    assert 'again: []' in r.stdout, r


def test_python_m_mate_guard_keeps_a_failing_scripts_own_status_and_fails_a_passing_one(project):
    project.write(
        'script.py',
        SCRIPT.replace(
            'kwargs = eval(sys.argv[1]) if len(sys.argv) > 1 else {}\ninstall_guard_allocator(GuardAllocatorConfig(sync_on_free=False, **kwargs))\n',
            '',
        ),
    )
    r = project.python(['-m', 'mate_guard', 'script.py', 'x', 'overrun'])
    assert r.code == 1, r
    assert project.python(['-m', 'mate_guard', 'script.py', 'x', 'overrun', 'exit3']).code == 3
    assert project.python(['-m', 'mate_guard', '--exit-code', '9', 'script.py', 'x', 'overrun']).code == 9
    assert project.python(['-m', 'mate_guard', 'script.py', 'x']).code == 0


def test_pytest_keeps_its_own_exit_status(project):
    project.write(
        'test_one.py',
        'import cabi\n\ndef test_overrun():\n    p = cabi.alloc(100)\n    cabi.write(p, 100)\n    cabi.free(p)\n',
    )
    r = project.pytest(['--guard-alloc'])
    assert r.code == 1, r
    assert 'violation in this process' not in r.stderr, r
    assert '1 failed' in r.stdout, r
