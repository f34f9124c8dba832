"""One staged harness for "export, lower, serialize, run, compare with eager"
(upstream's executorch.backends.test.harness): see tester.py."""

from executorch.backends.test.harness.tester import Tester, tolerance_for

__all__ = ["Tester", "tolerance_for"]
