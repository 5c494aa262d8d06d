"""python -m mate_guard [--<setting> <value> ...] script.py args...: runs the
script with the guard installed, as `mate guard-run --device cuda` does for
one process. `python -m mate_guard report <dir>...` prints filed reports.
`run` may name the first form. Settings: `--mode head` (or `--guard-mode
head`, as pytest spells it), `--log-allocations`, ... (the settings table's names), or MATE_GUARD_SETTINGS-free defaults. A run
with violations exits with `--exit-code` (default 1), as sanitizers do."""

import os
import runpy
import sys

from . import GuardAllocatorConfig, GuardConfigError, _install
from ._report_dir import make_report_dir
from ._settings import CONFIG_ROWS, description, parse, suggestion

USAGE = (
    'usage: python -m mate_guard [run] [--<setting> <value> | --[no-]<boolean-setting>] ... script.py [args...]\n'
    '       python -m mate_guard report <report dir or event file>... [--format text|sarif|github]'
)


def _flags(argv):
    # `--mode` as mate guard-run spells it, `--guard-mode` as pytest and the runner CLIs do.
    by_flag = {f'--{p}{r["name"]}': r for r in CONFIG_ROWS for p in ('', 'guard-')}
    known = sorted(by_flag) + sorted(f'--no-{f[2:]}' for f, r in by_flag.items() if r['value']['type'] == 'boolean')
    fields = {}
    spelled = {}  # snake key -> the flag as given, for errors found after parsing
    i = 0
    while i < len(argv) and argv[i].startswith('-'):
        arg = argv[i]
        if arg == '--':
            i += 1
            break
        if arg in ('-h', '--help'):
            print(USAGE)
            for r in CONFIG_ROWS:
                print(
                    f'  --{r["name"]} {r["placeholder"] or ""}'.ljust(34)
                    + f'{description(r)} (default {r["defaultText"]})'
                )
            sys.exit(0)
        name, eq, inline = arg.partition('=')
        # `--no-` turns a boolean off; on any other setting (`--no-mode head`) it is no spelling at all.
        negated = (
            name.startswith('--no-')
            and f'--{name[5:]}' in by_flag
            and by_flag[f'--{name[5:]}']['value']['type'] == 'boolean'
        )
        row = by_flag.get(f'--{name[5:]}' if negated else name)
        if row is None:
            raise GuardConfigError(f'unknown option "{name}"{suggestion(name, known)}')
        if row['value']['type'] == 'boolean' and not eq:
            value = not negated
        elif eq:
            value = inline
        elif i + 1 < len(argv):
            i += 1
            value = argv[i]
        else:
            raise GuardConfigError(f'{name}: a value is needed; use {row["hint"]}')
        key = row['spellings']['pythonKey']
        spelled[key] = name
        parsed = parse(row, value, name)
        # A repeatable setting (--native) gathers every use, as mate guard-run's does.
        fields[key] = fields.get(key, []) + parsed if row.get('repeatable') else parsed
        i += 1
    return fields, spelled, argv[i:]


def _refuse(why):
    """A bad setting or a run that cannot start: one line, status 2, as every mate-guard CLI."""
    text = str(why)
    sys.stderr.write(f'mate_guard: {text.removeprefix("mate-guard: ")}\n')
    return 2


def main(argv):
    if argv[:1] == ['report']:
        from ._report_cli import main as report

        return report(argv[1:])
    if argv[:1] == ['run']:  # names the default command, as `report` names the other
        argv = argv[1:]
    try:
        fields, spelled, rest = _flags(argv)
    except GuardConfigError as err:
        return _refuse(err)
    if not rest:
        sys.stderr.write(USAGE + '\n')
        return 2
    if not os.path.exists(rest[0]):  # a file, or a folder or zip with __main__.py, as runpy takes
        return _refuse(f"can't open file {rest[0]!r}: no such file")
    if os.path.isdir(rest[0]) and not os.path.isfile(os.path.join(rest[0], '__main__.py')):
        return _refuse(f"can't find '__main__' module in {rest[0]!r}: a folder runs its __main__.py")
    try:
        config = GuardAllocatorConfig(**fields)
    except GuardConfigError as err:  # MATE_GUARD_REPORT_DIR, read by the config
        return _refuse(err)
    why = make_report_dir(config.report_dir) if config.report_dir else ''
    if why:  # said as pytest says it, not as the library's failure to start
        return _refuse(why)
    try:
        # A CUDA setting without the device guard named as given (--launch-blocking).
        _install(config, lambda r: spelled.get(r['spellings']['pythonKey'], r['spellings']['pythonKey']))
    except RuntimeError as err:  # no usable guard library: stopped as a bad setting is
        return _refuse(err)
    sys.argv = rest
    # As `python script.py` would: the script's folder first on the path.
    sys.path[0] = os.path.dirname(os.path.abspath(rest[0]))
    try:
        runpy.run_path(rest[0], run_name='__main__')
    except SystemExit as done:
        if done.code not in (None, 0):
            # Already failing: the script's own status stands (exit_code is for a run that would pass).
            import mate_guard

            mate_guard._exit_status_owned = False
        raise
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
