"""`python -m mate_guard report <dir or file>...`: the filed reports of runs
as text, rendered by the one formatter (as `mate report` renders them),
for Python users without Node. Exit status as `mate report`'s: 1 when a
violation is not suppressed or a report file cannot be read (named and
counted), 0 when none, 2 when a path is missing or holds no report."""
import os
import re
import sys

from ._format import event_problem, format_text, unreadable_line

USAGE = 'usage: python -m mate_guard report <report dir or event file>...'
_EVENT = re.compile(r'^mate-guard-\d+-\d+\.json$')
# Notices (an out-of-memory) explain a failure; by themselves they fail nothing.
_NOTICES = {'out-of-memory'}
# No writer makes an event this big (the native reader's cap).
_MAX_EVENT_BYTES = 16 * 1024 * 1024


def _event_files(path):
    if os.path.isfile(path):
        return [path]
    found = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        found += [os.path.join(root, f) for f in files if _EVENT.match(f)]
    key = lambda p: (os.path.dirname(p), [int(n) for n in re.findall(r'\d+', os.path.basename(p))])
    return sorted(found, key=key)


def _read(path):
    """(event JSON text, '') or (None, why it cannot be read)."""
    try:
        size = os.path.getsize(path)
        if size > _MAX_EVENT_BYTES:
            return None, f'{size} bytes, more than any report ({_MAX_EVENT_BYTES} at most)'
        with open(path, encoding='utf-8', errors='surrogateescape') as f:
            text = f.read()
    except OSError as err:
        return None, f'{err.strerror}'
    if not text.strip():
        return None, 'the file is empty'
    problem = event_problem(text)
    return (None, problem) if problem else (text, '')


def main(argv):
    if not argv or argv[0] in ('-h', '--help'):
        print(USAGE)
        return 0 if argv else 2
    import json
    files = []
    for path in argv:
        if not os.path.exists(path):
            sys.stderr.write(f'mate_guard report: {path} does not exist\n')
            return 2
        found = _event_files(path)
        if not found:
            sys.stderr.write(f'mate_guard report: {path} holds no mate-guard report (mate-guard-<pid>-<n>.json)\n')
            return 2
        files += found
    failed = False
    out = []
    for path in files:
        text, why = _read(path)
        if text is None:
            sys.stderr.write(unreadable_line(path, why))
            failed = True
            continue
        event = json.loads(text)
        if event.get('suppressed'):
            continue
        failed = failed or event.get('kind') not in _NOTICES
        rendered = event.get('text') if isinstance(event.get('text'), str) and event.get('text') else format_text(text, path)
        out.append(rendered)
    sys.stdout.write(''.join(out))
    return 1 if failed else 0
