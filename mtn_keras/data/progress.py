"""A plain progress bar on stderr, by bytes of a file read; silent when stderr is not a terminal."""

import sys
import time


class Progress:
    """Shows `label  42%  12.0/28.5 MB` on stderr, redrawn at most ten times a second."""

    def __init__(self, label: str, total_bytes: int, enabled: bool | None = None) -> None:
        self.label = label
        self.total = max(total_bytes, 1)
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._last = 0.0

    def update(self, done_bytes: int) -> None:
        """Redraws the bar for `done_bytes` read so far."""
        now = time.monotonic()
        if not self.enabled or now - self._last < 0.1:
            return
        self._last = now
        self._draw(done_bytes)

    def close(self) -> None:
        """Draws the bar full and ends its line."""
        if self.enabled:
            self._draw(self.total)
            sys.stderr.write("\n")
            sys.stderr.flush()

    def _draw(self, done: int) -> None:
        share = min(done / self.total, 1.0)
        bar = "#" * int(share * 30)
        sys.stderr.write(
            f"\r{self.label}  [{bar:<30}] {share:4.0%}  {done / 1e6:.1f}/{self.total / 1e6:.1f} MB"
        )
        sys.stderr.flush()
