"""Utilities upstream ExecuTorch ships as `executorch.util`
(`activation_memory_profiler`)."""
