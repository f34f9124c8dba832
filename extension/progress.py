"""Progress bars for long work (exports, sweeps, benchmarks), on tqdm.

A bar is drawn on stderr only when stderr is a terminal and the work lasts
over `SHOW_AFTER_SECONDS` (or `delay`), so logs, piped output and quick calls stay clean;
`quiet=True` (the tools' `--quiet`) or the environment variable
`TQDM_DISABLE=1` hides it anyway.
Messages printed while a bar is shown go through `ProgressBar.write` so
they do not tear it.
"""

import sys
from typing import Optional

from tqdm import tqdm


# Work shorter than this never draws a bar.
SHOW_AFTER_SECONDS = 1.0


class ProgressBar:
    """A bar over `total` steps (or bytes, with `unit="B"`): `begin(label)`
    names the step under way, `step(n)` counts n more done."""

    def __init__(
        self,
        total: int,
        description: str,
        quiet: bool = False,
        unit: str = "it",
        delay: Optional[float] = None,
    ):
        self.shown = not quiet and sys.stderr.isatty()
        self._bar = tqdm(
            total=total,
            desc=description,
            file=sys.stderr,
            disable=not self.shown,
            leave=False,
            dynamic_ncols=True,
            delay=SHOW_AFTER_SECONDS if delay is None else delay,
            unit=unit,
            unit_scale=unit == "B",
        )

    def begin(self, label: str) -> None:
        """Shows `label` as the step under way."""
        self._bar.set_postfix_str(label)

    def step(self, n: int = 1) -> None:
        """Counts `n` more steps done."""
        self._bar.update(n)

    def write(self, message: str) -> None:
        """Prints `message` on stdout above the bar."""
        tqdm.write(message, file=sys.stdout)

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> "ProgressBar":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
