"""Filed events as the text a user reads: rendered by mate-guard's one
report formatter (the native core's, through libmate_guard_cuda.so's C
ABI), byte for byte as `mate report` and a dying process render them."""

import collections
import json
import os
import sys

from . import _library

Report = collections.namedtuple('Report', 'kind text file test context_lost')

# Kinds after which the process's CUDA context is gone (a kernel exception).
CONTEXT_LOST = {'illegal-address', 'device-assert', 'device-fault'}


def _options(path):
    # Native frames the process left unsymbolized get file:line from llvm-symbolizer or addr2line, as in Node.
    return json.dumps({'cwd': os.getcwd(), 'file': path or '', 'symbolize': True})


def _with_origin(event_json):
    # An event records its writer's runtime (the formatter folds its frames); one written before events did is
    # read as this process's, as it was rendered then. Spliced in, so the rest of the text stays as written.
    try:
        event = json.loads(event_json)
    except ValueError:
        return event_json
    if not isinstance(event, dict) or not event or 'runtime' in event:
        return event_json
    body = event_json.lstrip()
    return '{"runtime":%s,%s' % (json.dumps(os.path.realpath(sys.executable)), body[1:])


def format_text(event_json, path=None):
    """The text report of one event (its JSON text); a bad event gives one line naming why."""
    return _library.load().format_report(_with_origin(event_json), 'text', _options(path))


def format_rerun(event_json, path=None):
    """What the run's rerun found for the event (its JSON text; its `rerun`), as the run's terminal printed it
    under the report, by the one formatter: '' when it has none."""
    return _library.load().format_rerun(event_json, _options(path))


def format_reports(fmt, events, unreadable, tool_version):
    """`mate report --format sarif|github`'s output: `events` as (event JSON text, run place or None) pairs,
    `unreadable` as (file, why) pairs; sites and fingerprints resolved by the native formatter, here."""
    items = ','.join('{"event":%s,"run":%s}' % (_with_origin(text), json.dumps(run)) for text, run in events)
    notes = json.dumps([{'holds': 'report', 'why': why, 'file': path} for path, why in unreadable])
    input_json = '{"toolVersion":%s,"events":[%s],"unreadable":%s}' % (json.dumps(tool_version), items, notes)
    return _library.load().format_reports(input_json, fmt, _options(None))


def event_problem(event_json):
    """'' when the event is one this version reads, else why not (naming the field)."""
    return _library.load().event_problem(event_json)


def visible_lines(text):
    """A report's text as filed in an event (the artifact's word: a forged one can hold escape sequences) with
    what a terminal would obey spelled out, as the formatter does for every field; newlines and tabs stay."""
    return _library.load().visible_lines(text)


def filed_text(path, event):
    """The text an event's printer filed in it, shown safely; else the event rendered now."""
    text = event.get('text')
    return visible_lines(text) if isinstance(text, str) and text else format_text(json.dumps(event), path)


def unreadable_line(path, why):
    """The line that names a report file no reader could read (as `mate report` prints it)."""
    return f'[mate-guard] error: cannot read report file {path}: {why}; counted as a violation that could not be read\n'


def render(path, event):
    """A filed event (parsed) as a Report: the text its printer wrote into it, or rendered now."""
    text = filed_text(path, event)
    return Report(
        kind=event.get('kind') or 'unknown',
        text=text.rstrip('\n'),
        file=path,
        test=event.get('test'),
        context_lost=event.get('kind') in CONTEXT_LOST,
    )
