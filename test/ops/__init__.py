"""Operator sweep: every Core ATen operator (and the Edge and common non-core
operators the exporter emits) exported as a one-op program, run on our
runtime and compared with eager PyTorch per dtype.

- `op_check`: one (operator, dtype) check: build the one-op module, export,
  lower, run, compare; tolerances per dtype.
- `op_samples`: which operators to sweep and their sample inputs (OpInfo
  samples where PyTorch has them, our own otherwise).
- `sweep_runner`: the crash-proof worker pool that runs the whole sweep.
- `op_sweep`: the full sweep, the `executorch-op-sweep` command.
- `test_op_sweep`: the quick subset CI runs.
"""
