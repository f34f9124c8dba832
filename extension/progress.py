"""Progress bars for long work (exports, sweeps, benchmarks), on tqdm.

A bar is drawn on stderr only when stderr is a terminal, so logs and piped
output stay clean; `quiet=True` (the tools' `--quiet`) hides it anyway.
Messages printed while a bar is shown go through `ProgressBar.write` so
they do not tear it.
"""

import sys
from tqdm import tqdm


class ProgressBar:
    """A bar over `total` steps: `begin(label)` names the step under way,
    `step()` counts it done."""

    def __init__(self, total: int, description: str, quiet: bool = False):
        self.shown = not quiet and sys.stderr.isatty()
        self._bar = tqdm(
            total=total,
            desc=description,
            file=sys.stderr,
            disable=not self.shown,
            leave=False,
            dynamic_ncols=True,
        )

    def begin(self, label: str) -> None:
        """Shows `label` as the step under way."""
        self._bar.set_postfix_str(label)

    def step(self) -> None:
        """Counts one step done."""
        self._bar.update(1)

    def write(self, message: str) -> None:
        """Prints `message` on stdout above the bar."""
        tqdm.write(message, file=sys.stdout)

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> "ProgressBar":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
