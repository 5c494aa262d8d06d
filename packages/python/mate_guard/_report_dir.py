"""The report folder a run was given: made with its missing parents before anything runs (`--guard-report-dir
out/mate-guard` before out/ exists, as CI has it), or refused in one line naming it, by pytest and
`python -m mate_guard` alike: a folder that cannot hold reports would lose every violation."""

import os


def make_report_dir(path: str) -> str:
    """Makes the report folder `path` with its missing parents; '' when it is a folder this process can write in,
    else why not (naming it)."""
    try:
        os.makedirs(path, mode=0o755, exist_ok=True)
    except FileExistsError:
        return f'the report folder {path} is not a folder'
    except OSError as err:
        return f'the report folder {path} cannot be made: {err.filename or path}: {err.strerror}'
    if not os.access(path, os.W_OK | os.X_OK):
        return f'the report folder {path} is not writable'
    return ''
