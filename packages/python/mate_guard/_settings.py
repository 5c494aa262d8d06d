"""The settings table, as settings.json describes it (generated from
packages/core-native/src/ts/settings/table.ts): the Python package's flags,
environment names, config fields and docs all come from here, and values
are parsed by their kind with the wording the Node packages use."""

import json
import os

from ._resources import resource


class GuardConfigError(ValueError):
    """A setting with a bad value or a misspelled name: the message names it and what is allowed."""


def _load():
    path = resource('settings.json')
    try:
        with open(path, encoding='utf-8') as f:
            return json.load(f)
    except (OSError, ValueError) as err:
        # Said at import, in one line, rather than a traceback in every pytest start-up.
        raise ImportError(
            f'mate-guard: its settings table {path} cannot be read ({err}): a broken install? reinstall mate-guard'
        ) from None


DOC = _load()
HANDOFF_ENV = DOC['handoffEnv']
HANDOFF_VERSION = DOC['handoffVersion']
# The rows pytest takes (`python`: the device guard's; `pytest`: the plugin's own, e.g. rerun).
ROWS = [r for r in DOC['settings'] if {'python', 'pytest'} & set(r['surfaces'])]
# GuardAllocatorConfig's fields (and `python -m mate_guard`'s flags): every
# `python` row but `alloc` (installing is the switch), and the API's own
# (`pythonApi`: exit_code).
CONFIG_ROWS = [r for r in DOC['settings'] if r['key'] != 'enabled' and {'python', 'pythonApi'} & set(r['surfaces'])]
# Rows of this process's Python side only: not handed to the library.
PROCESS_KEYS = {r['key'] for r in CONFIG_ROWS if 'python' not in r['surfaces']}
# The settings that act only on CUDA device memory (the table's `needsDevice`).
DEVICE_ONLY = [r for r in DOC['settings'] if r['needsDevice']]

# What a setting does in a Python process where the table's description speaks of Node (JS buffers, its API,
# the runners' report folders): pytest --help and python -m mate_guard --help show these.
PYTHON_DESCRIPTIONS = {
    'enabled': 'Guard the host memory of this pytest process and of its xdist workers (numpy arrays; with '
    '--guard-native, the native heap of chosen extension modules) and its CUDA device memory where there is a GPU, '
    'and check canaries after every test.',
    'captureStacks': 'Record the Python stack (and the native frames) of every allocation and free for reports; '
    "of a chosen module's native allocation, the Python call into the module; with the device guard also of "
    'every kernel launch.',
    'nativeModules': 'Guard the native heap (malloc, calloc, realloc, free, aligned forms, strdup, C++ new/delete) '
    "of the loaded extension modules whose absolute path or file name matches, e.g. '*_myext*.so'; a library the "
    "module pulls in matches too. Other modules' allocations are untouched. A glob that matches no loaded module "
    'gets one warning.',
    'reportDir': "Where violations are written as JSON events, with each process's counters (stats-<pid>-0.json); "
    'made with its missing parents. Every process of the run (xdist workers, forked children) writes straight into '
    'it, and it is kept, clean or not, for python -m mate_guard report <dir> (CI: shards). Without one: a fresh '
    "folder of the process's own under <tmp>/mate-guard-<uid>/, private to you, removed at exit when it holds no "
    'report.',
}


def description(row: dict) -> str:
    """The row's description as a Python user reads it."""
    return PYTHON_DESCRIPTIONS.get(row['key'], row['description'])


_TRUE = {'1', 'true', 'yes', 'on'}
_FALSE = {'0', 'false', 'no', 'off'}


def show(value):
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if value is None:
        return 'None'
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


def parse(row, value, where):
    """`value` (a flag's or variable's text, or a Python value) as the row's kind."""
    spec = row['value']
    kind = spec['type']
    if kind == 'boolean':
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return value == 1
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise GuardConfigError(f'{where}: {show(value)} is not a boolean; use {row["hint"]}')
    if kind == 'choice':
        if isinstance(value, str) and value.strip().lower() in spec['choices']:
            return value.strip().lower()
        raise GuardConfigError(f'{where}: {show(value)} is not a {spec["what"]}; use {" or ".join(spec["choices"])}')
    if kind == 'integer':
        n = value
        if isinstance(value, str) and value.strip():
            try:
                n = int(value.strip(), 10)
            except ValueError:
                n = None
        if isinstance(n, bool) or not isinstance(n, int) or n < spec['min'] or n > spec['max']:
            raise GuardConfigError(
                f'{where}: {show(value)} is not allowed; use an integer from {spec["min"]} to {spec["max"]}'
            )
        if spec['powerOfTwo'] and n & (n - 1):
            raise GuardConfigError(
                f'{where}: {show(value)} is not allowed; use a power of two from {spec["min"]} to {spec["max"]}'
            )
        return n
    if kind == 'text':
        if not isinstance(value, str) or not value.strip():
            raise GuardConfigError(f'{where}: {show(value)} is not a {spec["what"]}; use a non-empty {spec["what"]}')
        return value.strip()
    if kind in ('path', 'file'):
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str) or not value:
            raise GuardConfigError(f'{where}: {show(value)} is not a {spec["what"]} path')
        return os.path.abspath(value)
    if kind == 'list':
        if isinstance(value, str):
            items = [v.strip() for v in value.split(',') if v.strip()]
            if not items:  # `--guard-native ''`: a slip that would guard nothing, silently
                raise GuardConfigError(f'{where}: {show(value)} names no {spec["item"]}; use {row["hint"]}')
            return items
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return [v for v in value if v]
        raise GuardConfigError(
            f'{where}: {show(value)} is not a list; use comma-separated {spec["item"]}s or a list of strings'
        )
    raise GuardConfigError(f'{where}: settings.json names an unknown kind {kind!r}: a newer mate-guard wrote it?')


def unused_without_device(values, where, off):
    """One warning line for each device-only setting in `values` (by snake key) that asks for something while the
    device guard is off (`off`: why, from the library; '' when it is on). In Python the device guard is on wherever
    there is a CUDA driver, so one config serves a GPU machine and a CPU-only one: a CUDA setting is said to do
    nothing on the second, not refused (Node refuses it, where `device` is the user's own setting in the same
    config: settings/device-only.ts). As there, a value at its default, or a boolean turned off
    (--no-guard-track-launches: what a run without the device does anyway), asks for nothing."""
    if not off:
        return []
    lines = []
    for row in DEVICE_ONLY:
        value = values.get(row['spellings']['pythonKey'])
        if value is None or value is False or value == row['default']:
            continue
        lines.append(f'[mate-guard] warning: {where(row)} does nothing here: the device guard is off ({off})')
    return lines


def closest(word, known):
    """The known spelling nearest to `word`, when it is close enough to be a typo."""
    import difflib

    near = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return near[0] if near else None


# The table's settings the Python package does not take (the Node runners', mate guard-run's, the Node API's).
_ELSEWHERE = [r for r in DOC['settings'] if not {'python', 'pytest', 'pythonApi'} & set(r['surfaces'])]


def _elsewhere(word: str) -> str:
    """Why `word` (--guard-suppressions, --suppressions, MATE_PYTEST_GUARD_SUPPRESSIONS, guard_suppressions) is
    refused when it names one of the table's settings that Python does not take; '' when it names none."""
    for row in _ELSEWHERE:
        name = row['name']
        snake = name.replace('-', '_')
        spellings = {f'--{name}', f'--guard-{name}', f'--no-{name}', f'--no-guard-{name}', f'guard_{snake}'}
        spellings.add(f'MATE_PYTEST_GUARD_{snake.upper()}')
        if word in spellings:
            owner = (
                'the Node runners and mate guard-run'
                if {'runner', 'guardRun'} & set(row['surfaces'])
                else "the Node API's installGuardAllocator"
            )
            return (
                f': {row["spellings"]["pytestFlag"]} is a setting of {owner}, '
                'which pytest and python -m mate_guard do not take'
            )
    return ''


def suggestion(word, known):
    elsewhere = _elsewhere(word)
    if elsewhere:
        return elsewhere
    near = closest(word, known)
    return f'; did you mean {near}?' if near else f'; known: {", ".join(known)}'
