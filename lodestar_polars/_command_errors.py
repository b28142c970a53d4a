"""What the ``lodestar-polars`` commands share: the program name, the exit codes, and the two errors that map to
them (a usage error exits 2, a data error 1).  The ``evaluate`` command (`cli`) and the trec_eval emulator
(`trec_eval`) both raise these; neither imports the other."""

from __future__ import annotations

import polars as pl

PROG = "lodestar-polars"
EXIT_OK, EXIT_DATA_ERROR, EXIT_USAGE_ERROR = 0, 1, 2


class UsageError(Exception):
    """Wrong arguments: exit code 2."""


class DataError(Exception):
    """The data cannot be evaluated (unreadable file, bad values, missing columns): exit code 1."""


# Exceptions the package (and Polars, and the file system) raise for bad data.  Options are checked before
# any data is read, so a ValueError or TypeError raised while building the plan is a usage error instead.
DATA_ERRORS: tuple[type[BaseException], ...] = (
    DataError,
    ValueError,
    ZeroDivisionError,
    OSError,
    pl.exceptions.PolarsError,
)


class EmptyInputError(UsageError):
    """An input file trec_eval refuses to read (zero bytes, "Cannot read results file"): exit code 2, as
    trec_eval's "Quit in file"."""
