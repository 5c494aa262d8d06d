"""Settings, markers and skips of `pytest --guard-alloc`, and the plugin's start-up rules."""

import re

import pytest

SUITE = """
import pytest
import cabi


def test_clean():
    cabi.free(cabi.alloc(100))


@pytest.mark.graph_capture
def test_captures_a_graph():
    pass


@pytest.mark.guard_incompatible
def test_incompatible():
    pass


@pytest.mark.parametrize('use_graph', [False, True])
def test_maybe_graph(use_graph):
    cabi.free(cabi.alloc(8))
"""
REASON = 'guard allocator debug mode does not support graph capture'


def test_tagged_tests_are_skipped_with_the_reason_and_counted_in_the_summary(project):
    project.write('test_tags.py', SUITE)
    r = project.pytest(['--guard-alloc', '--strict-markers'])
    assert r.code == 0, r
    assert len(re.findall(rf'^SKIPPED \[1\] test_tags\.py:\d+: {REASON}$', r.stdout, re.M)) == 3, r
    assert '2 passed, 3 skipped' in r.stdout, r
    assert re.search(
        r'^\[mate-guard\] summary: 2 allocations guarded, .*0 violations, 3 tests skipped by tag$', r.stdout, re.M
    ), r


def test_without_guard_alloc_tagged_tests_run_and_nothing_is_guarded(project):
    project.write('test_tags.py', SUITE)
    r = project.pytest(['--strict-markers'])
    assert r.code == 0, r
    assert '5 passed' in r.stdout, r
    assert '[mate-guard]' not in r.output, r


def test_a_bad_value_stops_the_session_before_collection_naming_it(project):
    project.write('test_tags.py', SUITE)
    r = project.pytest(['--guard-alloc', '--guard-mode', 'diagonal'])
    # One line and exit 2, as every mate-guard entry point.
    assert r.code == 2, r
    assert r.stderr == 'mate-guard: --guard-mode: "diagonal" is not a guard mode; use tail or head\n', r
    assert 'collected' not in r.output, r


# No CUDA driver here: MATE_GUARD_CUDA_DRIVER names none, so the device guard is off whatever the machine has.
NO_DRIVER = {'MATE_GUARD_CUDA_DRIVER': '/nonexistent/libcuda.so.1'}
DOES_NOTHING = (
    ' does nothing here: the device guard is off (the CUDA driver (libcuda.so.1) could not be loaded: no NVIDIA '
    'driver on this machine)\n'
)


def test_a_cuda_setting_where_the_device_guard_is_off_is_said_to_do_nothing_naming_it_as_given_and_the_run_goes_on(
    project,
):
    # One config for a GPU machine and a CPU-only one: on the second the run goes on, with one line per setting.
    project.write('test_plain.py', 'def test_plain():\n    pass\n')
    cases = [
        (['--guard-launch-blocking'], {}, '--guard-launch-blocking'),
        ([], {'MATE_PYTEST_GUARD_DUMP_INPUTS': '*k*'}, 'MATE_PYTEST_GUARD_DUMP_INPUTS'),
        (['-o', 'guard_cuda_quarantine=strict'], {}, 'ini guard_cuda_quarantine'),
    ]
    for args, env, where in cases:
        r = project.pytest(['--guard-alloc', *args], dict(NO_DRIVER, **env))
        assert r.code == 0, r
        assert r.stderr.count('does nothing here') == 1, r
        assert f'[mate-guard] warning: {where}{DOES_NOTHING}' in r.stderr, r
        assert '1 passed' in r.stdout, r
    project.write('script.py', 'print("ran")\n')
    r = project.python(['-m', 'mate_guard', '--sync-on-free', 'script.py'], NO_DRIVER)
    assert (r.code, r.stdout) == (0, 'ran\n'), r
    assert (
        r.stderr.count('does nothing here') == 1 and f'[mate-guard] warning: --sync-on-free{DOES_NOTHING}' in r.stderr
    ), r
    api = (
        'import mate_guard\nmate_guard.install_guard_allocator(mate_guard.GuardAllocatorConfig(launch_blocking=True))\n'
        'print("installed")\n'
    )
    r = project.python(['-c', api], NO_DRIVER)
    assert (r.code, r.stdout) == (0, 'installed\n'), r
    assert f'[mate-guard] warning: GuardAllocatorConfig launch_blocking{DOES_NOTHING}' in r.stderr, r


def test_a_cuda_setting_at_its_default_or_turned_off_needs_no_device_and_with_one_every_one_is_taken(project):
    project.write('test_plain.py', 'def test_plain():\n    pass\n')  # no device memory: it runs with no driver
    off = ['--guard-track-launches', '--no-guard-sync-on-free', '--no-guard-launch-blocking']
    r = project.pytest(['--guard-alloc', *off, '-o', 'guard_cuda_quarantine=adaptive'], NO_DRIVER)
    assert r.code == 0, r
    assert 'CUDA device memory: not guarded' in r.stdout, r
    assert 'does nothing here' not in r.stderr, r
    # The simulated driver: the device guard is on, as wherever there is a GPU.
    on = ['--guard-launch-blocking', '--guard-dump-inputs', '*k*', '--guard-cuda-quarantine', 'strict']
    r = project.pytest(['--guard-alloc', *on, '--guard-sync-on-free', '--guard-device-exact-placement'])
    assert r.code == 0, r
    assert 'does nothing here' not in r.output, r


def test_a_misspelled_variable_or_ini_key_stops_the_session_with_the_nearest_spelling(project):
    project.write('test_tags.py', SUITE)
    r = project.pytest(['--guard-alloc'], env={'MATE_PYTEST_GUARD_RERUNN': '0'})
    assert r.code == 2, r
    assert (
        'unknown environment variable "MATE_PYTEST_GUARD_RERUNN"; did you mean MATE_PYTEST_GUARD_RERUN?' in r.stderr
    ), r
    project.write('pytest.ini', '[pytest]\nguard_mdoe = head\n')
    r = project.pytest(['--guard-alloc'])
    assert r.code == 2, r
    assert 'unknown ini option "guard_mdoe"; did you mean guard_mode?' in r.stderr, r


@pytest.mark.skipif(int(pytest.__version__.split('.')[0]) < 9, reason='pytest < 9 reads no [tool.pytest] table')
def test_pytest_9s_toml_table_takes_typed_values_and_names_a_bad_one(project):
    project.write('test_tags.py', SUITE)
    # TOML's own types (a bool, an integer, a list of globs), as pytest 9's [tool.pytest] keeps them: taken, not a
    # TypeError traceback from getini.
    project.write(
        'pyproject.toml',
        '[tool.pytest]\nguard_alloc = true\nguard_alignment = 16\nguard_rerun = false\n'
        'guard_native = ["*_nosuchext*.so"]\n',
    )
    r = project.pytest(['-k', 'clean'])
    assert r.code == 0, r
    assert 'Traceback' not in r.output, r
    assert '[mate-guard] summary:' in r.stdout, r
    assert '"*_nosuchext*.so" matched no loaded module' in r.stdout, r
    project.write('pyproject.toml', '[tool.pytest]\nguard_alloc = true\nguard_mode = 5\n')
    r = project.pytest([])
    assert r.code == 2, r
    assert r.stderr == 'mate-guard: ini guard_mode: 5 is not a guard mode; use tail or head\n', r


def test_a_node_only_setting_is_named_as_such_not_answered_with_the_nearest_python_spelling(project):
    project.write('test_tags.py', SUITE)
    r = project.pytest(['--guard-alloc', '--guard-suppressions', 'x.supp'])
    assert r.code == 2, r
    assert r.stderr == (
        'mate-guard: unknown option "--guard-suppressions": --guard-suppressions is a setting of the Node runners '
        'and mate guard-run, which pytest and python -m mate_guard do not take\n'
    ), r
    r = project.pytest(['--guard-alloc'], env={'MATE_PYTEST_GUARD_FORCE_MPROTECT': '1'})
    assert r.code == 2, r
    assert "--guard-force-mprotect is a setting of the Node API's installGuardAllocator" in r.stderr, r
    r = project.python(['-m', 'mate_guard', '--suppressions', 'x.supp', 'missing.py'])
    assert r.code == 2, r
    assert r.stderr.startswith('mate_guard: unknown option "--suppressions": --guard-suppressions is a setting'), r


def test_guard_native_modules_names_a_bad_value_as_the_config_does(project):
    script = (
        'import mate_guard\n'
        'mate_guard.install_guard_allocator()\n'
        'for bad in (5, [], [""], ["*_a*.so", 3]):\n'
        '    try:\n'
        '        mate_guard.guard_native_modules(bad)\n'
        '    except mate_guard.GuardConfigError as err:\n'
        '        print(err)\n'
    )
    project.write('api_globs.py', script)
    r = project.python(['api_globs.py'])
    assert r.code == 0, r
    assert r.stdout.splitlines() == [
        'guard_native_modules: 5 is not a list; use comma-separated globs or a list of strings',
        'guard_native_modules: [] names an empty glob or none; use a glob',
        "guard_native_modules: [''] names an empty glob or none; use a glob",
        "guard_native_modules: ['*_a*.so', 3] is not a list; use comma-separated globs or a list of strings",
    ], r


def test_help_lists_the_rerun_setting_for_pytest_and_not_the_api_only_exit_code(project):
    r = project.pytest(['--help'])
    assert r.code == 0, r
    assert '--guard-rerun' in r.stdout and '--no-guard-rerun' in r.stdout, r
    assert 'launch blocking' in r.stdout, r
    # Both reruns the flag turns off: the host canary one (the only one without a GPU) too.
    assert 'canary damage in host memory' in ' '.join(r.stdout.split()), r
    assert '--guard-exit-code' not in r.stdout, r
    # pytest's own default for the frees' wait, not a plain Python process's
    assert 'on in a serial run, off in xdist workers' in ' '.join(r.stdout.split()), r
    assert 'off in Python' not in ' '.join(r.stdout.split()), r
    # Python's wording, not the Node runners' (JS buffers, installGuardAllocator, a run folder made inside).
    flat = ' '.join(r.stdout.split())
    assert 'Guard the host memory of this pytest process' in flat, r
    assert 'Record the Python stack' in flat, r
    assert 'python -m mate_guard report <dir>' in flat, r
    for node_words in ('JS buffers', 'JS stack', 'installGuardAllocator', 'makes a directory of its own inside it'):
        assert node_words not in flat, node_words


def test_a_missing_library_never_breaks_pytest_and_guard_alloc_says_so_before_collection(project):
    # One line and exit 2, as a Node runner with no usable native binary (not pytest's usage error, 4).
    project.write('test_plain.py', 'def test_plain():\n    assert 1 + 1 == 2\n')
    missing = {'MATE_GUARD_CUDA_LIBRARY': str(project.dir / 'nowhere' / 'libmate_guard_cuda.so')}
    plain = project.pytest([], env=missing)
    assert plain.code == 0, plain
    assert '1 passed' in plain.stdout, plain
    r = project.pytest(['--guard-alloc'], env=missing)
    assert r.code == 2, r
    assert r.stderr.startswith('mate-guard: the CUDA guard library is missing: ') and r.stderr.count('\n') == 1, r
    assert 'collected' not in r.output, r


PLACEMENT = """
import cabi


def test_placement():
    p = cabi.alloc(100)
    print(f'placement: start%16={p % 16} end%16={(p + 100) % 16} end%4096={(p + 100) % 4096}')
    cabi.free(p)
"""


def test_device_exact_placement_puts_a_device_allocations_last_byte_against_the_guard(project):
    project.write('test_placement.py', PLACEMENT)
    plain = project.pytest(['--guard-alloc', '-s'])
    assert plain.code == 0, plain
    assert re.search(r'placement: start%16=0 end%16=4 end%4096=[1-9]', plain.stdout), (
        plain
    )  # aligned: a 12-byte gap after the end
    exact = project.pytest(['--guard-alloc', '--guard-device-exact-placement', '-s'])
    assert exact.code == 0, exact
    assert 'placement: start%16=12 end%16=0 end%4096=0' in exact.stdout, exact
    env = project.pytest(['--guard-alloc', '-s'], env={'MATE_PYTEST_GUARD_DEVICE_EXACT_PLACEMENT': '1'})
    assert 'placement: start%16=12 end%16=0 end%4096=0' in env.stdout, env


def test_the_api_config_takes_the_report_folder_from_mate_guard_report_dir_unless_given(project):
    show = 'import mate_guard as m; print(m.GuardAllocatorConfig().report_dir, m.GuardAllocatorConfig(report_dir="/g").report_dir)'
    assert project.python(['-c', show], {'MATE_GUARD_REPORT_DIR': '/from-env'}).stdout == '/from-env /g\n'
    assert project.python(['-c', show], {'MATE_GUARD_REPORT_DIR': ''}).stdout == 'None /g\n'


def test_a_stray_continuation_variable_stops_the_session_naming_it(project):
    # The plugin's own variable (the process that goes on after a host fault): set by hand, it is named, not a traceback.
    project.write('test_tags.py', SUITE)
    gone = str(project.dir / 'no-such-folder')
    r = project.pytest(['--guard-alloc'], env={'MATE_PYTEST_CONTINUE': gone})
    assert r.code == 4, r
    assert (
        f"mate-guard: MATE_PYTEST_CONTINUE='{gone}' is not the folder of a pytest run that went on after a fault "
        '(No such file or directory)' in r.output
    ), r
    assert 'Traceback' not in r.output, r
