"""`python -m mate_guard report <dir or file>... [--format text|sarif|github]`:
the filed reports of runs, for Python users without Node, as `mate report`
prints them: the same formats, rendered by the one formatter in the native
core (text, SARIF 2.1.0, GitHub annotations: sites and fingerprints are
resolved there too). Exit status as `mate report`'s: 1 when a violation
is not suppressed or a report file cannot be read (named and counted), 0
when none (a folder of clean runs, their counters only, included), 2 for a bad option, a path that is missing
or holds neither a report nor a run's counters, or a missing library."""

import json
import os
import re
import sys

from ._files import MAX_REPORT_BYTES, Refused, read_report_file
from ._format import event_problem, format_reports, format_rerun, format_text, unreadable_line, visible_lines

FORMATS = ('text', 'sarif', 'github')
USAGE = 'usage: python -m mate_guard report <report dir or event file>... [--format text|sarif|github]'
_EVENT = re.compile(r'^mate-guard-\d+-\d+\.json$')
# A process's counters: a run's folder holds them clean or not (a clean run: no report, still a run).
_COUNTERS = re.compile(r'^stats-\d+-\d+\.json$')
_UNFINISHED = re.compile(r'^mate-guard-\d+-\d+\.json\.tmp$')
_UNFINISHED_WHY = 'its writing never finished (the disk filled up, or the process died while writing it)'
# Notices (an out-of-memory) explain a failure; by themselves they fail nothing.
_NOTICES = {'out-of-memory'}
_MAX_EVENT_BYTES = MAX_REPORT_BYTES


class _UsageError(Exception):
    pass


def _parse(argv):
    paths, fmt = [], 'text'
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == '--format' or arg.startswith('--format='):
            if arg == '--format':
                i += 1
                if i == len(argv):
                    raise _UsageError(f'--format needs a value: {", ".join(FORMATS)}')
                value = argv[i]
            else:
                value = arg[len('--format=') :]
            if value not in FORMATS:
                raise _UsageError(f'--format {json.dumps(value)} is not a format; known: {", ".join(FORMATS)}')
            fmt = value
        elif arg.startswith('-'):
            raise _UsageError(
                f'unknown option {json.dumps(arg)}; report takes report directories or event files and --format {"|".join(FORMATS)}'
            )
        else:
            paths.append(arg)
        i += 1
    if not paths:
        raise _UsageError(f'no report directory given\n{USAGE}')
    return paths, fmt


def _holds_run(path):
    """Whether the folder `path` (or one below it) holds a run's counters: a clean run's folder."""
    return any(_COUNTERS.match(f) for _, _, files in os.walk(path) for f in files)


def _files(path):
    """(event or unfinished file, its folder) in `mate report`'s order: folders depth first, names sorted."""
    if os.path.isfile(path):
        # A run's counters file named itself is a run with no report in it, not an unreadable report.
        return [] if _COUNTERS.match(os.path.basename(path)) else [(path, os.path.dirname(path) or '.')]
    found = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        names = set(files)
        for f in sorted(files):
            # Beside its report a .tmp is a rewrite that did not finish (the report stands); alone, a report never filed.
            if _EVENT.match(f) or (_UNFINISHED.match(f) and f[: -len('.tmp')] not in names):
                found.append((os.path.join(root, f), root))
    return found


def _read(path):
    """(event JSON text, its event, '') or (None, None, why it cannot be read)."""
    if _UNFINISHED.match(os.path.basename(path)):
        return None, None, _UNFINISHED_WHY
    try:
        text = read_report_file(path, _MAX_EVENT_BYTES)
    except Refused as refused:
        return None, None, refused.why
    except OSError as err:
        return None, None, f'{err.strerror}'
    if not text.strip():
        return None, None, 'the file is empty'
    problem = event_problem(text)
    if problem:
        return None, None, problem
    try:
        # Stricter than the native reader (a raw control character in a string), as mate report's JSON.parse is.
        return text, json.loads(text), ''
    except ValueError as err:
        return None, None, f'not JSON ({err})'


_places = {}


def _run_place(folder, cache=_places):
    """Where the run in `folder` ran, as its run.json recorded it (data: shown, never obeyed); None when it did not.
    A run.json that is there but cannot be read is named (as `mate report` names it); it fails nothing."""
    if folder not in cache:
        place = None
        file = os.path.join(folder, 'run.json')
        why = None
        try:
            info = json.loads(read_report_file(file, _MAX_EVENT_BYTES))
            if isinstance(info, dict) and info.get('tool') == 'mate-guard' and info.get('cwd') and info.get('root'):
                place = {'cwd': str(info['cwd']), 'root': str(info['root'])}
        except Refused as refused:
            why = refused.why
        except FileNotFoundError:
            pass
        except OSError as err:
            why = err.strerror
        except ValueError as err:
            why = f'not JSON ({err})'
        if why:
            sys.stderr.write(
                f'[mate-guard] warning: cannot read run file {file}: {why}; '
                'that run is shown without its runner and paths\n'
            )
        cache[folder] = place
    return cache[folder]


def _identity(e):
    """The same violation filed twice (a folder named twice, or copied into two artifacts) is one."""
    a = e.get('allocation') if isinstance(e.get('allocation'), dict) else {}
    return json.dumps(
        [e.get('kind'), e.get('pid'), a.get('id'), a.get('start'), e.get('address'), e.get('test'), e.get('damage')],
        sort_keys=True,
    )


def _tool_version():
    try:
        from importlib.metadata import version

        return version('mate-guard')
    except Exception:
        pass
    try:
        import tomllib

        with open(
            os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'pyproject.toml'), 'rb'
        ) as f:
            return tomllib.load(f)['project']['version']
    except (OSError, KeyError, ValueError):
        return 'unknown'


def main(argv):
    if argv[:1] in (['-h'], ['--help']):
        print(USAGE)
        return 0
    try:
        paths, fmt = _parse(argv)
    except _UsageError as err:
        sys.stderr.write(f'mate_guard report: {err}\n')
        return 2
    files = []
    for path in paths:
        if not os.path.exists(path):
            sys.stderr.write(f'mate_guard report: {path} does not exist\n')
            return 2
        found = _files(path)
        run = _holds_run(path) if os.path.isdir(path) else os.path.isfile(path) and not found
        if not found and not run:
            sys.stderr.write(
                f'mate_guard report: {path} holds no mate-guard report (mate-guard-<pid>-<n>.json) '
                'nor run (stats-<pid>-<n>.json)\n'
            )
            return 2
        files += found
    try:
        # The formatter is the library's: without it nothing can be read (a broken install), said as a bad start
        # is (exit 2), not as a violation left (exit 1).
        from . import _library

        _library.load()
    except (RuntimeError, OSError) as err:
        sys.stderr.write(f'mate_guard report: {str(err).removeprefix("mate-guard: ")}\n')
        return 2
    failed = False
    seen_files, seen = set(), set()
    events, unreadable = [], []
    for path, folder in files:
        real = os.path.realpath(path)
        if real in seen_files:
            continue
        seen_files.add(real)
        text, event, why = _read(path)
        if text is None:
            # Named on stderr whatever the format: a file cut short is never passed over.
            sys.stderr.write(unreadable_line(path, why))
            unreadable.append((path, why))
            failed = True
            continue
        if _identity(event) in seen:
            continue
        seen.add(_identity(event))
        failed = failed or (not event.get('suppressed') and event.get('kind') not in _NOTICES)
        events.append((path, text, event, _run_place(folder)))
    if fmt == 'text':
        out = []
        for path, text, event, _ in events:
            if not event.get('suppressed'):
                filed = event.get('text')
                out.append(visible_lines(filed) if isinstance(filed, str) and filed else format_text(text, path))
                out.append(format_rerun(text, path))  # what the run's rerun found, as `mate report` shows it
        sys.stdout.write(''.join(out))
        if not events and not unreadable:  # only clean runs' folders: said, so that silence is not mistaken
            sys.stdout.write(f'[mate-guard] no violations: {", ".join(paths)} holds clean runs only\n')
    else:
        rendered = format_reports(fmt, [(text, run) for _, text, _, run in events], unreadable, _tool_version())
        sys.stdout.write(rendered + ('\n' if fmt == 'sarif' else ''))
    return 1 if failed else 0
