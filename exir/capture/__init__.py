"""Compilation configuration (`EdgeCompileConfig`, `ExecutorchBackendConfig`)."""

from ._config import EdgeCompileConfig, ExecutorchBackendConfig

__all__ = ["EdgeCompileConfig", "ExecutorchBackendConfig"]
