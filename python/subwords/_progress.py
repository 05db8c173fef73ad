"""A progress line on a terminal, drawn from counters the engine updates.

The engine never calls into Python while it trains: it updates atomic counters, and this thread
reads them a few times a second while the training call runs with the GIL released.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING, Optional, TextIO

if TYPE_CHECKING:
    from ._core import ProgressView

_UNITS = {"reading": "MB", "spelling": "units", "merging": "rows"}


class ProgressLine:
    def __init__(self, view: ProgressView, stream: Optional[TextIO] = None, interval: float = 0.2) -> None:
        self._view = view
        self._stream = stream or sys.stderr
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="subwords-progress", daemon=True)
        self._start = time.monotonic()
        self._width = 0

    def __enter__(self) -> "ProgressLine":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        if self._width:
            self._stream.write("\r" + " " * self._width + "\r")
            self._stream.flush()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            phase, done, total = self._view.read()
            if phase in ("idle", "done"):
                continue
            unit = _UNITS.get(phase, "")
            if unit == "MB":
                done_s, total_s = f"{done / 1e6:,.1f}", f"{total / 1e6:,.1f}"
            else:
                done_s, total_s = f"{done:,}", f"{total:,}"
            frac = done / total if total else 0.0
            bar = "#" * int(frac * 24)
            line = f"training: {phase} [{bar:<24}] {done_s}/{total_s} {unit} {time.monotonic() - self._start:5.1f}s"
            self._width = max(self._width, len(line))
            self._stream.write("\r" + line.ljust(self._width))
            self._stream.flush()
