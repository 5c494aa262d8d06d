"""GuardAllocatorConfig: one field per setting of the table's Python rows
(snake_case), made from settings.json rather than written out again."""

import dataclasses
import os

from ._settings import CONFIG_ROWS, HANDOFF_VERSION, PROCESS_KEYS, description, parse


def _field(row):
    default = row['default']
    if isinstance(default, list):
        return dataclasses.field(default_factory=lambda d=tuple(default): list(d))
    return dataclasses.field(default=default)


def _post_init(self):
    # Each value checked and normalised as the Node packages do; None keeps
    # the default, or the row's process-wide environment default where it
    # has one and it is set (MATE_GUARD_REPORT_DIR), as installGuardAllocator's.
    for row in CONFIG_ROWS:
        name = row['spellings']['pythonKey']
        value = getattr(self, name)
        if value is None or value == row['default']:
            env = os.environ.get(row['processEnv']) if row['processEnv'] else None
            if env not in (None, ''):
                object.__setattr__(self, name, parse(row, env, row['processEnv']))
            continue
        object.__setattr__(self, name, parse(row, value, name))


def _to_handoff(self, report_dir=None):
    """The handoff JSON the library reads (MATE_GUARD_SETTINGS), as `mate guard-run --device cuda` writes it."""
    settings = {'device': 'cuda'}
    explicit = []
    for row in CONFIG_ROWS:
        if row['key'] in PROCESS_KEYS:
            continue
        value = getattr(self, row['spellings']['pythonKey'])
        if value is not None:
            settings[row['key']] = value
        if value != row['default']:
            explicit.append(row['key'])
    if report_dir is not None and settings.get('reportDir') is None:
        settings['reportDir'] = report_dir
    return {'version': HANDOFF_VERSION, 'settings': settings, 'explicit': explicit}


def _doc():
    lines = ["The device guard's settings (the settings table of mate-guard).", '']
    for row in CONFIG_ROWS:
        lines.append(
            f'{row["spellings"]["pythonKey"]} ({row["allowed"]}, default {row["defaultText"]}): {description(row)}'
        )
    return '\n'.join(lines)


GuardAllocatorConfig = dataclasses.make_dataclass(
    'GuardAllocatorConfig',
    [(r['spellings']['pythonKey'], object, _field(r)) for r in CONFIG_ROWS],
    namespace={'__post_init__': _post_init, 'to_handoff': _to_handoff},
    frozen=True,
)
GuardAllocatorConfig.__module__ = 'mate_guard'
GuardAllocatorConfig.__doc__ = _doc()
