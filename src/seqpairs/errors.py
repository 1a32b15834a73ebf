"""The one exception type that means "the user's input or request is wrong"."""


class UserError(Exception):
    """A problem the user can fix (bad file, bad record, bad option).

    The CLI prints it as a single line `seqpairs: error: <message>` and exits 2,
    without a traceback. Messages name the file and record where there is one:
    `FILE:RECORD: problem`.
    """


def cannot_read(path, exc: OSError) -> UserError:
    """The one line for an input that cannot be opened or read (a folder, no permission)."""
    return UserError(f"{path}: cannot read ({exc.strerror or exc})")
