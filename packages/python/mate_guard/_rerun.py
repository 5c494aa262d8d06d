"""One-step reruns under pytest: canary damage in host memory is found
late (at the free or the test's end); the test is run once more in a
child pytest with the placement that makes the first bad access fault
(the opposite mode, or byte-exact placement for damage in the tail gap:
alignment 1 for an array, the block's size alone for a native block),
and that fault's report is shown under the original. The child files into
a folder of its own, not the run's: its fault is the same bug, attached to
the original event as `rerun` (as the Node runners' reruns do), never a
second violation for `python -m mate_guard report` or SARIF to count."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

from ._files import write_new_file
from ._library import EVENT_NAME, read_event

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
        # Tail mode ends the block short of its guard by the gap its alignment leaves (malloc's 16 bytes for a
        # native block), unless its size is a multiple of it: closed too, or the rerun finds the same damage.
        size, align = a.get('size') or 0, a.get('alignment') or 1
        if align > 1 and size % align:
            gap = (
                ['--guard-native-exact-size', str(size)]
                if a.get('backend') == 'native-heap'
                else ['--guard-alignment', '1']
            )
            return ['--guard-mode', 'tail', *gap]
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


def _fault(folder: str, test: str):
    """The rerun's fault in its `folder`: an event a fault filed (fatal, not a death of another cause), `test`'s
    first; None when there is none."""
    found = []
    for name in sorted(os.listdir(folder)):
        if not EVENT_NAME.fullmatch(name):
            continue
        event = read_event(os.path.join(folder, name))  # {} when it cannot be read
        if isinstance(event, dict) and event.get('fatal') and not event.get('death'):
            found.append(event)
    return next((e for e in found if e.get('test') == test), found[0] if found else None)


def _attach(file: str, event: dict, flags: list, alignment, fault) -> None:
    """The original event gets the rerun's placement and fault (or null), as `mate report` reads it."""
    a = event.get('allocation') or {}
    # Both always given, as `mate report` reads them (a string and a number).
    given = dict(zip(flags[::2], flags[1::2]))
    result = {
        'mode': given.get('--guard-mode') or str(a.get('mode') or 'tail'),
        'alignment': 1 if '--guard-alignment' in given else alignment if isinstance(alignment, int) else 16,
    }
    if '--guard-native-exact-size' in given:
        result['nativeExactSize'] = int(given['--guard-native-exact-size'])
    result['fault'] = {k: v for k, v in fault.items() if k != 'file'} if fault else None
    try:
        write_new_file(file, json.dumps(dict(event, rerun=result)) + '\n')
    except OSError:
        pass  # the report stands without it; the rerun's text was printed


def rerun(config, reports, write_line, alignment=16):
    """Reruns each test whose host canary was damaged, once; writes what the rerun found. `alignment`: the run's."""
    if os.environ.get(CHILD_ENV):
        return
    done = set()
    for r in reports:
        if not r.file or not r.test or r.test in done:
            continue
        try:
            with open(r.file, encoding='utf-8') as f:
                event = json.load(f)
            flags = _plan(event)
        except (OSError, ValueError):
            continue
        if flags is None:
            continue
        done.add(r.test)
        # One test, in the child itself: under pytest-xdist a fault would end a worker, not the child.
        serial = ['-n', '0'] if getattr(config.option, 'numprocesses', None) else []
        folder = tempfile.mkdtemp(prefix='mate-guard-rerun-')
        # Last, so it wins over the run's own folder; one word, or pytest would take the folder for a test path
        # in choosing the rootdir (and name the tests from there).
        own = [f'--guard-report-dir={folder}']
        cmd = [sys.executable, '-m', 'pytest', *_base_args(config), *serial, *flags, *own, r.test]
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
            shutil.rmtree(folder, ignore_errors=True)
            write_line(f'[mate-guard] the rerun did not end within {_TIMEOUT_S} s')
            continue
        _attach(r.file, event, flags, alignment, _fault(folder, r.test))
        shutil.rmtree(folder, ignore_errors=True)
        lines = [line for line in (out.stdout + '\n' + out.stderr).splitlines() if line.startswith('==mate-guard== ')]
        faulted = out.returncode < 0 and any(' ERROR: heap-buffer-' in line for line in lines)
        if faulted:
            for line in lines:
                write_line(line)
        else:
            write_line(
                f'[mate-guard] the rerun did not fault (exit {out.returncode}): the damage may depend on earlier tests'
            )
