"""The package's own suite: real pytest and python processes over the real
libmate_guard_cuda.so and the simulated CUDA driver (packages/core-native/test/sim:
device memory is host memory, so a test writes past an allocation from
Python). Tests allocate through the C ABI (test/fixtures/python/cabi.py),
as there is no torch here.

    python3 -m pytest packages/python/tests     (npm test runs it: test/python-suite.test.mjs)
"""

import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.normpath(os.path.join(PKG, '..', '..'))
CORE = os.path.join(ROOT, 'packages', 'core-native')
FIXTURES = os.path.join(ROOT, 'test', 'fixtures', 'python')
LIBRARY = os.path.join(CORE, 'build', 'Release', 'libmate_guard_cuda.so')


def _fake_driver():
    """The simulated driver: $MATE_GUARD_CUDA_DRIVER, the npm build's, or built here with g++."""
    given = os.environ.get('MATE_GUARD_CUDA_DRIVER')
    if given:
        return given
    built = os.path.join(CORE, 'build', 'Release', 'libmate_guard_fake_cuda.so')
    if os.path.exists(built):
        return built
    if shutil.which('g++') is None:
        return None
    out = os.path.join(tempfile.mkdtemp(prefix='mate-sim-'), 'libfakecuda.so')
    subprocess.run(
        ['g++', '-O2', '-shared', '-fPIC', '-o', out, os.path.join(CORE, 'test', 'sim', 'fake_cuda.cc')], check=True
    )
    return out


@pytest.fixture(scope='session')
def sim():
    if not os.path.exists(LIBRARY):
        pytest.skip(f'{LIBRARY} is not built (npm install)')
    driver = _fake_driver()
    if driver is None:
        pytest.skip('no simulated CUDA driver: no build of it and no g++ to build one')
    return {'MATE_GUARD_CUDA_DRIVER': driver, 'MATE_GUARD_CUPTI': driver}


def _installed():
    try:
        importlib.metadata.distribution('mate-guard')
        return True
    except importlib.metadata.PackageNotFoundError:
        return False


class Run:
    def __init__(self, proc):
        self.code, self.stdout, self.stderr = proc.returncode, proc.stdout, proc.stderr
        self.output = proc.stdout + proc.stderr

    def __repr__(self):  # what an assertion shows
        return f'exit {self.code}\n{self.output}'


class Project:
    """A fresh folder with test files, where pytest and python run on this checkout's package."""

    def __init__(self, sim, tmp_path):
        self.dir = tmp_path
        self.sim = sim
        shutil.copy(os.path.join(FIXTURES, 'cabi.py'), tmp_path / 'cabi.py')
        self.reports = tmp_path / 'reports'

    def write(self, name, text):
        (self.dir / name).write_text(text)

    def env(self, extra=None):
        env = dict(os.environ, **self.sim)
        for name in list(env):
            if name.startswith('MATE_PYTEST_') or name in ('PYTEST_ADDOPTS', 'MATE_GUARD_SETTINGS'):
                del env[name]
        env['PYTHONPATH'] = PKG + os.pathsep + str(self.dir)
        env['MATE_PYTEST_GUARD_REPORT_DIR'] = str(self.reports)
        env['MATE_GUARD_REPORT_DIR'] = str(self.reports)
        env['COLUMNS'] = '400'  # pytest's short summary lines whole
        env.update(extra or {})
        return env

    def python(self, args, env=None, python=sys.executable):
        proc = subprocess.run(
            [python, *args], cwd=self.dir, env=self.env(env), capture_output=True, text=True, timeout=300
        )
        return Run(proc)

    def pytest(self, args, env=None, python=sys.executable):
        plugin = [] if _installed() and python == sys.executable else ['-p', 'mate_guard.pytest_plugin']
        warn = (
            ['-W', 'error::pytest.PytestRemovedIn10Warning']
            if python == sys.executable and hasattr(pytest, 'PytestRemovedIn10Warning')
            else []
        )
        return self.python(['-m', 'pytest', *plugin, *warn, '-p', 'no:cacheprovider', '-rfs', *args], env, python)


@pytest.fixture
def project(sim, tmp_path):
    return Project(sim, tmp_path)
