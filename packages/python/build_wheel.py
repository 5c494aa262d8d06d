#!/usr/bin/env python3
"""Builds the mate-guard wheel from the already built CUDA library
(packages/core-native/build/Release/libmate_guard_cuda.so, or --library),
with the standard library only: no Node, no compiler, no build backend.

    python3 packages/python/build_wheel.py [--library PATH] [--out DIR]

The wheel is tagged manylinux_<glibc floor>_x86_64, the floor read from the
glibc symbol versions the library imports (objdump -T), as
packages/core-native/scripts/prebuild.js does for the npm prebuilds."""
import argparse
import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
CORE = os.path.normpath(os.path.join(HERE, '..', 'core-native'))
SHIPPED = {
    # The one copy of each, shared with the npm package.
    'settings.json': os.path.join(CORE, 'src', 'native', 'options', 'settings.json'),
    'mate_guard_cuda.py': os.path.join(CORE, 'python', 'mate_guard_cuda.py'),
}


def fail(msg):
    sys.stderr.write(f'build_wheel: {msg}\n')
    sys.exit(1)


def version_key(v):
    return tuple(int(x) for x in v.split('.'))


def floor(lib, prefix):
    """The highest `prefix`_x.y among the symbol versions `lib` imports."""
    try:
        out = subprocess.run(['objdump', '-T', lib], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as err:
        fail(f'objdump -T {lib} failed ({err}): binutils are needed to read the glibc floor')
    found = re.findall(rf'\b{prefix}_(\d+(?:\.\d+)+)\b', out)
    return max(found, key=version_key) if found else None


def machine(lib):
    with open(lib, 'rb') as f:
        head = f.read(20)
    if head[:4] != b'\x7fELF':
        fail(f'{lib} is not an ELF library')
    e_machine = int.from_bytes(head[18:20], 'little')
    if e_machine != 62:  # EM_X86_64
        fail(f'{lib} is not x86-64 (e_machine {e_machine}): only x86-64 wheels are built')
    return 'x86_64'


def record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
    return f'{arcname},sha256={digest},{len(data)}'


def build(library, out_dir):
    with open(os.path.join(HERE, 'pyproject.toml'), 'rb') as f:
        project = tomllib.load(f)['project']
    name, version = project['name'], project['version']
    dist = name.replace('-', '_')
    if not os.path.exists(library):
        fail(f'{library} does not exist: build the native core first (npm run build:native, or cmake over packages/core-native)')
    for what, path in SHIPPED.items():
        if not os.path.exists(path):
            fail(f'{path} ({what}) does not exist')
    arch = machine(library)
    with tempfile.TemporaryDirectory() as tmp:
        lib = os.path.join(tmp, 'libmate_guard_cuda.so')
        shutil.copyfile(library, lib)
        subprocess.run(['strip', '--strip-unneeded', lib], check=False)
        glibc = floor(lib, 'GLIBC')
        if glibc is None:
            fail(f'{library} imports no versioned glibc symbols: is it a glibc build?')
        glibcxx = floor(lib, 'GLIBCXX')
        major, minor = glibc.split('.')[:2]
        tag = f'py3-none-manylinux_{major}_{minor}_{arch}'
        files = {}
        pkg = os.path.join(HERE, 'mate_guard')
        for entry in sorted(os.listdir(pkg)):
            if entry.endswith('.py'):
                with open(os.path.join(pkg, entry), 'rb') as f:
                    files[f'mate_guard/{entry}'] = f.read()
        with open(lib, 'rb') as f:
            files['mate_guard/_shipped/libmate_guard_cuda.so'] = f.read()
        # The crash printer, built beside the library: a dying process's full report without Node.
        printer = os.path.join(os.path.dirname(library), 'mate-guard-print')
        if not os.path.exists(printer):
            fail(f'{printer} does not exist: it is built with the library (cmake --build <dir> --target mate_guard_cuda)')
        shipped_printer = os.path.join(tmp, 'mate-guard-print')
        shutil.copyfile(printer, shipped_printer)
        subprocess.run(['strip', '--strip-unneeded', shipped_printer], check=False)
        with open(shipped_printer, 'rb') as f:
            files['mate_guard/_shipped/mate-guard-print'] = f.read()
        for what, path in SHIPPED.items():
            with open(path, 'rb') as f:
                files[f'mate_guard/_shipped/{what}'] = f.read()
    with open(os.path.join(HERE, 'README.md'), encoding='utf-8') as f:
        readme = f.read()
    info = f'{dist}-{version}.dist-info'
    metadata = [
        'Metadata-Version: 2.1', f'Name: {name}', f'Version: {version}', f'Summary: {project["description"]}',
        f'License: {project["license"]["text"]}', f'Requires-Python: {project["requires-python"]}',
        'Classifier: Framework :: Pytest', 'Classifier: Operating System :: POSIX :: Linux',
        # Not in the tag: the libstdc++ the library needs (as the npm prebuilds' manifest says).
        f'Platform: linux-{arch} (glibc >= {glibc}, libstdc++ GLIBCXX >= {glibcxx or "none"})',
        'Description-Content-Type: text/markdown', '', readme,
    ]
    files[f'{info}/METADATA'] = '\n'.join(metadata).encode()
    files[f'{info}/WHEEL'] = (f'Wheel-Version: 1.0\nGenerator: mate-guard build_wheel.py\nRoot-Is-Purelib: false\nTag: {tag}\n').encode()
    eps = project.get('entry-points', {})
    files[f'{info}/entry_points.txt'] = ''.join(
        f'[{group}]\n' + ''.join(f'{k} = {v}\n' for k, v in entries.items()) + '\n' for group, entries in eps.items()).encode()
    files[f'{info}/top_level.txt'] = b'mate_guard\n'
    record = [record_line(n, d) for n, d in files.items()] + [f'{info}/RECORD,,']
    files[f'{info}/RECORD'] = ('\n'.join(record) + '\n').encode()
    os.makedirs(out_dir, exist_ok=True)
    wheel = os.path.join(out_dir, f'{dist}-{version}-{tag}.whl')
    with zipfile.ZipFile(wheel, 'w', zipfile.ZIP_DEFLATED) as z:
        for n, d in files.items():
            zi = zipfile.ZipInfo(n, date_time=(1980, 1, 1, 0, 0, 0))
            # A regular file's type bits too: pip keeps the executable bit only for S_IFREG entries.
            zi.external_attr = (0o100755 if n.endswith(('.so', '/mate-guard-print')) else 0o100644) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, d)
    return wheel


def main():
    ap = argparse.ArgumentParser(description='Build the mate-guard wheel from the built CUDA library.')
    ap.add_argument('--library', default=os.path.join(CORE, 'build', 'Release', 'libmate_guard_cuda.so'))
    ap.add_argument('--out', default=os.path.join(HERE, 'dist'))
    args = ap.parse_args()
    print(build(args.library, args.out))


if __name__ == '__main__':
    main()
