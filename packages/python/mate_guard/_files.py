"""The files of a report folder as a reader takes them: the folder may come from elsewhere (a downloaded
artifact, a folder others can write to), so only a regular file is read, never through a link, and never more
than a cap; a FIFO or a device is refused, never waited on. As `mate report` reads them (report/files.ts).
And as this process writes its own there: whole, through no link."""

import errno
import os
import stat

# No writer makes a report file this big (the native reader's cap).
MAX_REPORT_BYTES = 16 * 1024 * 1024


class Refused(ValueError):
    """A file that is not one a report reader reads: `why`, in a few words."""

    def __init__(self, why):
        super().__init__(why)
        self.why = why


def _kind(mode):
    if stat.S_ISFIFO(mode):
        return 'a FIFO'
    if stat.S_ISCHR(mode):
        return 'a character device'
    if stat.S_ISBLK(mode):
        return 'a block device'
    if stat.S_ISSOCK(mode):
        return 'a socket'
    if stat.S_ISDIR(mode):
        return 'a directory'
    return 'not a file'


def read_report_file(path, cap=MAX_REPORT_BYTES):
    """The file's text (UTF-8; bytes that are not kept as surrogates); raises Refused or OSError."""
    try:
        # O_NONBLOCK: opening a FIFO waits for no writer (it is then refused by its type).
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise Refused(
                "a symbolic link (a report folder's files are read as plain files, never through a link)"
            ) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(f'{_kind(st.st_mode)}, not a regular file')
        if st.st_size > cap:
            raise Refused(f'{st.st_size} bytes, more than any report ({cap} at most)')
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            total += len(chunk)
            if total > cap:
                raise Refused(f'more than {cap} bytes, more than any report')
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b''.join(chunks).decode('utf-8', errors='surrogateescape')


def write_new_file(path: str, text: str) -> None:
    """Writes `text` to `path` whole: beside it first, then renamed over it, so a reader never sees half a file
    and a leftover or planted file or link at the side name is replaced, never followed."""
    side = path + '.tmp'
    try:
        os.unlink(side)
    except FileNotFoundError:
        pass
    fd = os.open(side, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, 'w', encoding='utf-8') as f:
        f.write(text)
    os.replace(side, path)
