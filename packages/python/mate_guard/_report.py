"""A filed event (the JSON the library writes to the report directory) as
text for a pytest failure. The full report is rendered by mate-guard's one
report formatter (TypeScript: `mate report <file>` where Node is, and the
library's printer writes it into the event as `text`); without Node this
shows the library's own headline and the event's facts, naming the file."""
import collections
import re

Report = collections.namedtuple('Report', 'kind text file test context_lost')

# Kinds after which the process's CUDA context is gone (a kernel exception).
CONTEXT_LOST = {'illegal-address', 'device-assert', 'device-fault'}
P = '==mate-guard== '


# Frames of the test runner below the test: cut (the report is about the test's code).
_RUNNER = re.compile(r'[/\\](_pytest|pluggy|mate_guard)[/\\]')


def _stack(label, text):
    if not text:
        return []
    frames = [line.strip() for line in text.rstrip('\n').split('\n')]
    for i, f in enumerate(frames):
        if i > 0 and _RUNNER.search(f):
            frames = frames[:i]
            break
    return [f'{P}{label}:'] + [f'{P}  {f}' for f in frames]


def _facts(e):
    kind = e.get('kind') or 'unknown'
    head = f'{P}ERROR: {kind}'
    if e.get('access') and e.get('address'):
        head += f' on {e["access"]} at {e["address"]}'
    a = e.get('allocation') or {}
    if a:
        head += f': allocation #{a.get("id")} ({a.get("size")} byte{"" if a.get("size") == 1 else "s"}, {a.get("mode")} mode)'
    dev = e.get('device') or {}
    lines = [head]
    if dev.get('error'):
        lines.append(f'{P}the GPU reported {dev["error"]} ({dev.get("errorText")}) on device {dev.get("ordinal")}'
                     + (f', seen by {dev["foundBy"]}' if dev.get('foundBy') else ''))
    if e.get('test'):
        lines.append(f'{P}test: {e["test"]}')
    d = e.get('damage') or {}
    for side, what in (('after', 'after the end'), ('before', 'before the start')):
        s = d.get(side) or {}
        if s.get('bytes'):
            lines.append(f'{P}{s["bytes"]} byte{"" if s["bytes"] == 1 else "s"} written {what} '
                         f'(nearest {s["nearest"]}, farthest {s["farthest"]} bytes out)')
    if a:
        lines.append(f'{P}allocation: {a.get("start")}..{a.get("end")} on device {dev.get("ordinal", 0)}'
                     + (f', allocated in test {a["allocTest"]}' if a.get('allocTest') else ''))
        lines += _stack('allocated at', a.get('allocStack'))
        if a.get('freed'):
            lines += _stack('freed at', a.get('freeStack'))
    launches = (e.get('launches') or {}).get('list') or []
    for launch in launches[:4]:
        if isinstance(launch, dict) and launch.get('kernel'):
            lines.append(f'{P}kernel in flight: {launch["kernel"]}')
    return lines


def render(path, event):
    if isinstance(event.get('text'), str) and event['text']:
        text = event['text'].rstrip('\n')
    else:
        try:
            facts = _facts(event)
        except (TypeError, KeyError, AttributeError, IndexError):  # an event of another version: the headline
            facts = [f'{P}ERROR: {event.get("kind") or "unknown"}']
        text = '\n'.join(facts + [f'{P}the full report: {path} (render it with `mate report {path}`)'])
    return Report(kind=event.get('kind') or 'unknown', text=text, file=path, test=event.get('test'),
                  context_lost=event.get('kind') in CONTEXT_LOST)
