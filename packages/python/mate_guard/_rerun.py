"""One-step reruns under pytest: canary damage in host memory is found
late (at the free or the test's end); the test is run once more in a
child pytest with the placement that makes the first bad access fault
(the opposite mode, or byte-exact placement for damage in the tail gap:
alignment 1 for an array, the block's size alone for a native block),
and that fault's report is shown under the original."""

import json
import os
import subprocess
import sys

CHILD_ENV = 'MATE_GUARD_PY_RERUN'  # set in the child: it never reruns again
_TIMEOUT_S = 300


def _plan(event):
    """The flags that make this damage fault, or None (not host canary damage, or no placement would)."""
    if event.get('kind') != 'canary-corruption':
        return None
    a = event.get('allocation') or {}
    d = event.get('damage') or {}
    before = (d.get('before') or {}).get('bytes')
    after = (d.get('after') or {}).get('bytes')
    mode = a.get('mode')
    if a.get('backend') not in ('host', 'native-heap'):
        return None
    if mode == 'tail' and before:
        return ['--guard-mode', 'head']
    if mode == 'head' and after:
        return ['--guard-mode', 'tail']
    if mode == 'tail' and after and a.get('backend') == 'host':
        return ['--guard-alignment', '1']  # the gap the alignment left after the end
    if mode == 'tail' and after and a.get('size'):
        # A native block's tail gap: malloc's 16-byte alignment stays for every
        # other block; this size alone is placed byte-exact (as the Node runners' rerun).
        return ['--guard-native-exact-size', str(a['size'])]
    return None


def _base_args(config):
    """This run's own arguments without its test selection (the rerun names one test)."""
    args = list(config.invocation_params.args)
    for chosen in getattr(config.option, 'file_or_dir', None) or []:
        if chosen in args:
            args.remove(chosen)
    return args


def rerun(config, reports, write_line):
    """Reruns each test whose host canary was damaged, once; writes what the rerun found."""
    if os.environ.get(CHILD_ENV):
        return
    done = set()
    for r in reports:
        if not r.file or not r.test or r.test in done:
            continue
        try:
            with open(r.file, encoding='utf-8') as f:
                flags = _plan(json.load(f))
        except (OSError, ValueError):
            continue
        if flags is None:
            continue
        done.add(r.test)
        # One test, in the child itself: under pytest-xdist a fault would end a worker, not the child.
        serial = ['-n', '0'] if getattr(config.option, 'numprocesses', None) else []
        cmd = [sys.executable, '-m', 'pytest', *_base_args(config), *serial, *flags, r.test]
        write_line(f'[mate-guard] rerun of {r.test} with {" ".join(flags)}, to fault at the first bad access:')
        try:
            out = subprocess.run(
                cmd,
                cwd=str(config.invocation_params.dir),
                env={**os.environ, CHILD_ENV: '1'},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                errors='replace',
                timeout=_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            write_line(f'[mate-guard] the rerun did not end within {_TIMEOUT_S} s')
            continue
        lines = [line for line in (out.stdout + '\n' + out.stderr).splitlines() if line.startswith('==mate-guard== ')]
        faulted = out.returncode < 0 and any(' ERROR: heap-buffer-' in line for line in lines)
        if faulted:
            for line in lines:
                write_line(line)
        else:
            write_line(
                f'[mate-guard] the rerun did not fault (exit {out.returncode}): the damage may depend on earlier tests'
            )
