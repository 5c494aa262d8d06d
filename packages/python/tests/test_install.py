"""The package as pip sees it: the in-tree PEP 517 backend builds the wheel,
the editable wheel and the sdist offline, with nothing to download, and an
install that cannot find the native library fails at build time, saying so."""

import glob
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

from conftest import LIBRARY, PKG

BACKEND = os.path.join(PKG, 'backend', 'mate_guard_backend.py')


def venv(tmp_path):
    """A fresh virtual environment (pytest lent from this Python's site packages); its python."""
    if sys.prefix != sys.base_prefix:
        pytest.skip('this Python is itself a virtual environment: its packages cannot be lent to a fresh one')
    subprocess.run([sys.executable, '-m', 'venv', '--system-site-packages', str(tmp_path / 'venv')], check=True)
    return str(tmp_path / 'venv' / 'bin' / 'python')


def pip(python, *args, env=None):
    return subprocess.run(
        [python, '-m', 'pip', '--disable-pip-version-check', 'install', '--no-index', '--no-deps', *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, **(env or {})),
        timeout=300,
    )


@pytest.fixture
def built():
    if not os.path.exists(LIBRARY):
        pytest.skip(f'{LIBRARY} is not built (npm install)')


def test_pip_install_from_the_source_folder_ships_the_library_and_the_plugin(built, tmp_path):
    python = venv(tmp_path)
    r = pip(python, PKG)
    assert r.returncode == 0, r.stdout + r.stderr
    where = subprocess.run(
        [python, '-c', 'import mate_guard._resources as r; print(r.library_path())'],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert where.stdout.strip().endswith('site-packages/mate_guard/_shipped/libmate_guard_cuda.so'), where
    assert os.path.exists(where.stdout.strip())
    helptext = subprocess.run([python, '-m', 'pytest', '--help'], cwd=tmp_path, capture_output=True, text=True)
    assert '--guard-alloc' in helptext.stdout, helptext.stderr
    # A broken install (its library deleted): one line naming the wheel's own copy, exit 2, from each entry point.
    shipped = where.stdout.strip()
    os.remove(shipped)
    (tmp_path / 'reports').mkdir()
    (tmp_path / 'reports' / 'mate-guard-1-1.json').write_text('{}')
    missing = f'the CUDA guard library is missing: {shipped} (a broken install? reinstall mate-guard)\n'
    for args, prefix in (
        (['-m', 'mate_guard', 'report', str(tmp_path / 'reports')], 'mate_guard report: '),
        (['-m', 'pytest', '-p', 'no:cacheprovider', '--guard-alloc', '--co', '-q', os.devnull], 'mate-guard: '),
    ):
        r = subprocess.run([python, *args], cwd=tmp_path, capture_output=True, text=True)
        assert (r.returncode, r.stderr) == (2, prefix + missing), r.stdout + r.stderr


def test_pip_install_editable_runs_the_checkout(built, tmp_path):
    python = venv(tmp_path)
    r = pip(python, '-e', PKG)
    assert r.returncode == 0, r.stdout + r.stderr
    where = subprocess.run(
        [
            python,
            '-c',
            'import mate_guard, mate_guard._resources as r; print(mate_guard.__file__); print(r.library_path())',
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert where.stdout.split('\n')[:2] == [os.path.join(PKG, 'mate_guard', '__init__.py'), LIBRARY], where


def test_the_sdist_alone_builds_a_wheel_offline(built, tmp_path):
    r = subprocess.run([sys.executable, BACKEND, '--sdist', '--out', str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    sdist = r.stdout.strip()
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
        tar.extractall(tmp_path / 'src')
    assert 'mate_guard-0.1.0/mate_guard/_shipped/libmate_guard_cuda.so' in names
    assert 'mate_guard-0.1.0/backend/mate_guard_backend.py' in names
    # Nowhere near the checkout: what it builds from is in the sdist.
    w = subprocess.run(
        [
            sys.executable,
            '-m',
            'pip',
            'wheel',
            '--no-index',
            '--no-deps',
            '-q',
            '-w',
            str(tmp_path / 'wheels'),
            str(tmp_path / 'src' / 'mate_guard-0.1.0'),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert w.returncode == 0, w.stdout + w.stderr
    [wheel] = glob.glob(str(tmp_path / 'wheels' / '*.whl'))
    assert os.path.basename(wheel).startswith('mate_guard-0.1.0-py3-none-')


def test_a_build_that_cannot_find_the_library_fails_naming_it(tmp_path):
    missing = str(tmp_path / 'nowhere.so')
    r = subprocess.run(
        [sys.executable, '-m', 'pip', 'wheel', '--no-index', '--no-deps', '-w', str(tmp_path), PKG],
        capture_output=True,
        text=True,
        env=dict(os.environ, MATE_GUARD_BUILD_LIBRARY=missing),
        timeout=300,
    )
    assert r.returncode != 0
    assert (
        f'mate-guard: {missing} (MATE_GUARD_BUILD_LIBRARY) does not exist: name the built libmate_guard_cuda.so'
        in r.stdout + r.stderr
    )
    assert not glob.glob(str(tmp_path / '*.whl'))


def _python(minor):
    """A Python 3.<minor> that runs here (on PATH, or one of pyenv's versions), or None."""
    found = [shutil.which(f'python3.{minor}')]
    found += sorted(glob.glob(os.path.expanduser(f'~/.pyenv/versions/3.{minor}.*/bin/python')))
    for python in found:
        if python and subprocess.run([python, '-c', 'import venv'], capture_output=True).returncode == 0:
            return python
    return None


def test_the_oldest_python_the_wheel_admits_runs_it_and_an_older_one_is_refused_at_install(built, tmp_path):
    r = subprocess.run([sys.executable, BACKEND, '--out', str(tmp_path / 'dist')], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    wheel = r.stdout.strip()
    with zipfile.ZipFile(wheel) as z:
        [meta] = [n for n in z.namelist() if n.endswith('.dist-info/METADATA')]
        admits = re.search(r'^Requires-Python: >=3\.(\d+)$', z.read(meta).decode(), re.M)
    assert admits, 'the wheel names its oldest Python'
    oldest = int(admits[1])
    lowest, older = _python(oldest), _python(oldest - 1)
    if lowest is None and older is None:
        pytest.skip(f'no Python 3.{oldest} or 3.{oldest - 1} here to install the wheel into')
    for python, admitted in ((lowest, True), (older, False)):
        if python is None:
            continue
        where = tmp_path / f'venv-{admitted}'
        subprocess.run([python, '-m', 'venv', str(where)], check=True)
        r = pip(str(where / 'bin' / 'python'), wheel)
        if not admitted:  # refused by pip, saying why, rather than installed and failing at import (in pytest's start)
            assert r.returncode != 0 and 'requires a different Python' in r.stdout + r.stderr, r.stdout + r.stderr
            continue
        assert r.returncode == 0, r.stdout + r.stderr
        run = subprocess.run(
            [str(where / 'bin' / 'python'), '-m', 'mate_guard', '--mode', 'bogus', 'x.py'],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert (run.returncode, run.stderr) == (
            2,
            'mate_guard: --mode: "bogus" is not a guard mode; use tail or head\n',
        )
