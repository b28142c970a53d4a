"""What a long command is doing, on a terminal: one status line on stderr, rewritten in place with the elapsed
time (``lodestar-polars: evaluating 10,000,000 rows of run.parquet… 12 s``), each step ending with its time; a
step done within a second shows nothing.

The commands show it when stderr is a terminal and ``--quiet`` is not given; elsewhere (a scheduler's log, a
pipe, a test) `Progress` writes nothing.  The Python API never shows it.  No extra package: a thread redraws the
line twice a second while the step's work (a Polars collect) runs.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from ._command_errors import PROG

REDRAW_SECONDS = 0.5
SHOW_AFTER_SECONDS = 1.0  # a step done sooner prints nothing: a quick command's output stays as it was


class Progress:
    """Steps of a command shown on `stream` when `enabled`; a no-op otherwise.

    >>> import io
    >>> stream = io.StringIO()
    >>> with Progress(True, stream, show_after=0.0).step("reading run.txt"):
    ...     pass
    >>> stream.getvalue().startswith("\\rlodestar-polars: reading run.txt… 0 s")
    True
    >>> with Progress(True, stream).step("reading run.txt"):  # done within a second: nothing shown
    ...     pass
    >>> with Progress(False, stream).step("reading run.txt"):
    ...     pass
    """

    def __init__(self, enabled: bool, stream: TextIO | None = None, show_after: float | None = None) -> None:
        self.enabled = enabled
        self.stream = sys.stderr if stream is None else stream
        self.show_after = SHOW_AFTER_SECONDS if show_after is None else show_after

    @classmethod
    def on_terminal(cls, quiet: bool) -> Progress:
        """Shown when stderr is a terminal and the user did not ask for quiet."""
        return cls(not quiet and sys.stderr.isatty())

    def _draw(self, label: str, started: float, end: str = "") -> None:
        self.stream.write(f"\r{PROG}: {label}… {time.monotonic() - started:.0f} s\033[K{end}")
        self.stream.flush()

    @contextmanager
    def step(self, label: str) -> Iterator[None]:
        """Show `label` and its elapsed time while the block runs; the line is kept, with its time, after it."""
        if not self.enabled:
            yield
            return
        started = time.monotonic()
        finished = threading.Event()
        shown = threading.Event()

        def redraw() -> None:
            if finished.wait(self.show_after):
                return
            shown.set()
            self._draw(label, started)
            while not finished.wait(REDRAW_SECONDS):
                self._draw(label, started)

        thread = threading.Thread(target=redraw, daemon=True)
        thread.start()
        try:
            yield
        finally:
            finished.set()
            thread.join()
            if shown.is_set():
                self._draw(label, started, end="\n")
