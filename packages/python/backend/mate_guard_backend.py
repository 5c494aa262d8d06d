#!/usr/bin/env python3
"""mate-guard's in-tree PEP 517 build backend (pyproject.toml: build-backend,
backend-path): the standard library only, so `pip install ./packages/python`,
`pip install -e ./packages/python` (PEP 660), `python -m build`-style sdist
and wheel builds all work offline, with no setuptools, wheel, Node or
compiler.

The wheel carries the already built CUDA library. Where it is taken from,
first found wins:
  1. the config setting `library` (pip -C library=/path/libmate_guard_cuda.so),
  2. $MATE_GUARD_BUILD_LIBRARY,
  3. mate_guard/_shipped/ (an unpacked sdist carries it),
  4. the repository's npm build (packages/core-native/build/Release),
  5. the npm package's prebuild (packages/core-native/prebuilds/linux-<arch>).
None found: the build fails, saying where it looked and how to build one.
An editable install points at the checkout and uses its library (4).

Also a command, as build_wheel.py was:
    python3 packages/python/backend/mate_guard_backend.py [--library PATH] [--out DIR] [--sdist]

The wheel is tagged manylinux_<glibc floor>_<arch>, the floor read from the
glibc symbol versions the library imports (objdump -T), as
packages/core-native/scripts/prebuild.js does for the npm prebuilds."""

import base64
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PKG_ROOT = os.path.dirname(HERE)  # packages/python (or the unpacked sdist)
CORE = os.path.normpath(os.path.join(PKG_ROOT, '..', 'core-native'))
LIB = 'libmate_guard_cuda.so'
# The crash printer, built beside the library: a reporting or dying process's full report without Node.
PRINTER = 'mate-guard-print'
SHIPPED_DIR = os.path.join(PKG_ROOT, 'mate_guard', '_shipped')
LIBRARY_ENV = 'MATE_GUARD_BUILD_LIBRARY'
ARCHES = {62: ('x86_64', 'x64'), 183: ('aarch64', 'arm64')}  # ELF e_machine -> (wheel arch, npm arch)
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


class BuildError(Exception):
    """Why the package cannot be built; one line, shown by pip."""


def _host_arch():
    import platform

    m = platform.machine()
    return {'x86_64': 'x64', 'amd64': 'x64', 'aarch64': 'arm64', 'arm64': 'arm64'}.get(m.lower(), m)


def library_candidates(config_settings=None):
    """(where it came from, path) in the order they are tried."""
    out = []
    given = (config_settings or {}).get('library')
    if given:
        out.append(('config setting library', os.path.abspath(given)))
    if os.environ.get(LIBRARY_ENV):
        out.append((LIBRARY_ENV, os.path.abspath(os.environ[LIBRARY_ENV])))
    out.append(('the sdist', os.path.join(SHIPPED_DIR, LIB)))
    out.append(('the npm build', os.path.join(CORE, 'build', 'Release', LIB)))
    out.append(('the npm prebuild', os.path.join(CORE, 'prebuilds', f'linux-{_host_arch()}', LIB)))
    return out


def find_library(config_settings=None):
    tried = library_candidates(config_settings)
    for where, path in tried:
        # A library the user named must exist: never a silent fall back to another.
        if where in ('config setting library', LIBRARY_ENV) and not os.path.isfile(path):
            raise BuildError(f'mate-guard: {path} ({where}) does not exist: name the built {LIB}')
    for _, path in tried:
        if os.path.isfile(path):
            return path
    raise BuildError(
        f'mate-guard: {LIB} was not found (looked in: {", ".join(p for _, p in tried)}). Build it first: '
        f'`npm install` at the repository root, or `cmake -S packages/core-native -B build-py -DMATE_GUARD_UNIT_TESTS=OFF && '
        f'cmake --build build-py --target mate_guard_cuda`, then pass it: pip install -C library=build-py/{LIB} ... '
        f'(or {LIBRARY_ENV}=...)'
    )


def settings_json():
    for path in (
        os.path.join(SHIPPED_DIR, 'settings.json'),
        os.path.join(CORE, 'src', 'native', 'options', 'settings.json'),
    ):
        if os.path.isfile(path):
            return path
    raise BuildError(
        'mate-guard: settings.json (the settings table) was not found beside the package or in packages/core-native'
    )


def project():
    try:
        import tomllib
    except ImportError:
        raise BuildError(
            f'mate-guard: building needs Python 3.11+ (tomllib); this is {sys.version.split()[0]}'
        ) from None
    with open(os.path.join(PKG_ROOT, 'pyproject.toml'), 'rb') as f:
        return tomllib.load(f)['project']


def version_key(v):
    return tuple(int(x) for x in v.split('.'))


def floor(lib, prefix):
    """The highest `prefix`_x.y among the symbol versions `lib` imports; None when objdump cannot tell."""
    try:
        out = subprocess.run(['objdump', '-T', lib], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    found = re.findall(rf'\b{prefix}_(\d+(?:\.\d+)+)\b', out)
    return max(found, key=version_key) if found else None


def machine(lib):
    with open(lib, 'rb') as f:
        head = f.read(20)
    if head[:4] != b'\x7fELF':
        raise BuildError(f'mate-guard: {lib} is not an ELF library')
    e_machine = int.from_bytes(head[18:20], 'little')
    if e_machine not in ARCHES:
        raise BuildError(f'mate-guard: {lib} is for ELF machine {e_machine}: only x86-64 and aarch64 wheels are built')
    return ARCHES[e_machine][0]


def record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
    return f'{arcname},sha256={digest},{len(data)}'


def _names(proj):
    return proj['name'], proj['version'], proj['name'].replace('-', '_')


def metadata(proj, platform_line=None):
    name, version, _ = _names(proj)
    with open(os.path.join(PKG_ROOT, 'README.md'), encoding='utf-8') as f:
        readme = f.read()
    lines = [
        'Metadata-Version: 2.1',
        f'Name: {name}',
        f'Version: {version}',
        f'Summary: {proj["description"]}',
        f'License: {proj["license"]["text"]}',
        f'Requires-Python: {proj["requires-python"]}',
        'Classifier: Framework :: Pytest',
        'Classifier: Operating System :: POSIX :: Linux',
    ]
    if platform_line:
        lines.append(platform_line)
    return '\n'.join(lines + ['Description-Content-Type: text/markdown', '', readme])


def _package_sources():
    """mate_guard/*.py: name in the archive -> bytes."""
    files = {}
    pkg = os.path.join(PKG_ROOT, 'mate_guard')
    for entry in sorted(os.listdir(pkg)):
        if entry.endswith('.py'):
            with open(os.path.join(pkg, entry), 'rb') as f:
                files[f'mate_guard/{entry}'] = f.read()
    return files


def _dist_info(proj, files, tag, platform_line=None, generator='mate_guard_backend'):
    name, version, dist = _names(proj)
    info = f'{dist}-{version}.dist-info'
    files[f'{info}/METADATA'] = metadata(proj, platform_line).encode()
    files[f'{info}/WHEEL'] = (
        f'Wheel-Version: 1.0\nGenerator: {generator}\nRoot-Is-Purelib: false\nTag: {tag}\n'
    ).encode()
    eps = proj.get('entry-points', {})
    files[f'{info}/entry_points.txt'] = ''.join(
        f'[{group}]\n' + ''.join(f'{k} = {v}\n' for k, v in entries.items()) + '\n' for group, entries in eps.items()
    ).encode()
    files[f'{info}/top_level.txt'] = b'mate_guard\n'
    record = [record_line(n, d) for n, d in files.items()] + [f'{info}/RECORD,,']
    files[f'{info}/RECORD'] = ('\n'.join(record) + '\n').encode()
    return info


def _write_wheel(out_dir, proj, tag, files):
    _, version, dist = _names(proj)
    os.makedirs(out_dir, exist_ok=True)
    name = f'{dist}-{version}-{tag}.whl'
    with zipfile.ZipFile(os.path.join(out_dir, name), 'w', zipfile.ZIP_DEFLATED) as z:
        for n, d in files.items():
            zi = zipfile.ZipInfo(n, date_time=ZIP_TIME)
            # A regular file's type bits too: pip keeps the executable bit only for S_IFREG entries.
            zi.external_attr = (0o100755 if n.endswith(('.so', PRINTER)) else 0o100644) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, d)
    return name


def _library_bytes(library):
    """The library, stripped, and what the tag and metadata say of it."""
    arch = machine(library)
    with tempfile.TemporaryDirectory() as tmp:
        lib = os.path.join(tmp, LIB)
        shutil.copyfile(library, lib)
        subprocess.run(['strip', '--strip-unneeded', lib], check=False, capture_output=True)
        glibc = floor(lib, 'GLIBC')
        glibcxx = floor(lib, 'GLIBCXX')
        with open(lib, 'rb') as f:
            data = f.read()
    if glibc is None:
        # Without objdump (or a non-glibc build) no manylinux floor can be claimed: a plain platform tag.
        tag = f'py3-none-linux_{arch}'
    else:
        major, minor = glibc.split('.')[:2]
        tag = f'py3-none-manylinux_{major}_{minor}_{arch}'
    platform_line = f'Platform: linux-{arch} (glibc >= {glibc or "unknown"}, libstdc++ GLIBCXX >= {glibcxx or "none"})'
    return data, tag, platform_line


def _printer_bytes(library):
    """mate-guard-print from beside the library, stripped; None (said on stderr) when it was not built there."""
    printer = os.path.join(os.path.dirname(library), PRINTER)
    if not os.path.isfile(printer):
        sys.stderr.write(
            f'mate-guard: {printer} does not exist (it is built with the library): '
            "without it a process without Node prints only a report's first line\n"
        )
        return None
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, PRINTER)
        shutil.copyfile(printer, copy)
        subprocess.run(['strip', '--strip-unneeded', copy], check=False, capture_output=True)
        with open(copy, 'rb') as f:
            return f.read()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    proj = project()
    library = find_library(config_settings)
    data, tag, platform_line = _library_bytes(library)
    files = _package_sources()
    files[f'mate_guard/_shipped/{LIB}'] = data
    printer = _printer_bytes(library)
    if printer is not None:
        files[f'mate_guard/_shipped/{PRINTER}'] = printer
    with open(settings_json(), 'rb') as f:
        files['mate_guard/_shipped/settings.json'] = f.read()
    _dist_info(proj, files, tag, platform_line)
    return _write_wheel(wheel_directory, proj, tag, files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 660: a wheel holding a .pth that puts this folder on sys.path; the
    package then runs from the checkout, with the checkout's library."""
    proj = project()
    checkout = os.path.join(CORE, 'build', 'Release', LIB)
    if not os.path.isfile(checkout):
        raise BuildError(
            f"mate-guard: an editable install uses the checkout's {LIB}, and {checkout} does not exist: "
            'run `npm install` (or `npm run build:native`) at the repository root first'
        )
    settings_json()
    _, version, dist = _names(proj)
    files = {f'__editable__.{dist}-{version}.pth': (PKG_ROOT + '\n').encode()}
    tag = 'py3-none-any'
    _dist_info(proj, files, tag)
    return _write_wheel(wheel_directory, proj, tag, files)


def build_sdist(sdist_directory, config_settings=None):
    """The sources with the library and settings table beside them
    (mate_guard/_shipped/): a wheel builds from it alone, offline."""
    proj = project()
    library = find_library(config_settings)
    _, version, dist = _names(proj)
    base = f'{dist}-{version}'
    files = {f'mate_guard/{n.split("/", 1)[1]}': d for n, d in _package_sources().items()}
    for rel in ('pyproject.toml', 'README.md', 'backend/mate_guard_backend.py'):
        with open(os.path.join(PKG_ROOT, rel), 'rb') as f:
            files[rel] = f.read()
    with open(library, 'rb') as f:
        files[f'mate_guard/_shipped/{LIB}'] = f.read()
    printer = os.path.join(os.path.dirname(library), PRINTER)
    if os.path.isfile(printer):
        with open(printer, 'rb') as f:
            files[f'mate_guard/_shipped/{PRINTER}'] = f.read()
    with open(settings_json(), 'rb') as f:
        files['mate_guard/_shipped/settings.json'] = f.read()
    files['PKG-INFO'] = metadata(proj).encode()
    os.makedirs(sdist_directory, exist_ok=True)
    name = f'{base}.tar.gz'
    with tarfile.open(os.path.join(sdist_directory, name), 'w:gz', format=tarfile.PAX_FORMAT) as tar:
        for n, d in sorted(files.items()):
            info = tarfile.TarInfo(f'{base}/{n}')
            info.size = len(d)
            info.mode = 0o755 if n.endswith(('.so', PRINTER)) else 0o644
            tar.addfile(info, io.BytesIO(d))
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def main():
    import argparse

    ap = argparse.ArgumentParser(description='Build the mate-guard wheel (or sdist) from the built CUDA library.')
    ap.add_argument('--library', help=f'the built {LIB} (default: {LIBRARY_ENV}, else the npm build)')
    ap.add_argument('--out', default=os.path.join(PKG_ROOT, 'dist'))
    ap.add_argument('--sdist', action='store_true', help='build the sdist instead of the wheel')
    args = ap.parse_args()
    settings = {'library': args.library} if args.library else None
    try:
        name = (build_sdist if args.sdist else build_wheel)(args.out, settings)
    except BuildError as err:
        sys.stderr.write(f'{err}\n')
        sys.exit(1)
    print(os.path.join(args.out, name))


if __name__ == '__main__':
    main()
