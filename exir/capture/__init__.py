"""Compilation configuration (`EdgeCompileConfig`, `ExecutorchBackendConfig`)."""

from ._config import CaptureConfig, EdgeCompileConfig, ExecutorchBackendConfig

__all__ = ["CaptureConfig", "EdgeCompileConfig", "ExecutorchBackendConfig"]
