"""Configuration of the two compilation stages: `to_edge` (EdgeCompileConfig)
and `to_executorch` (ExecutorchBackendConfig)."""

from dataclasses import dataclass, field
from typing import Any, List, Optional


@dataclass
class EdgeCompileConfig:
    """Options of `to_edge`.

    Attributes:
        _check_ir_validity: verify that every operator of the Edge program is a
            Core ATen operator (or an allowed exception); a violation raises
            `SpecViolationError` naming the node, its operator and source line.
        _core_aten_ops_exception_list: operators (`OpOverload`s) allowed in
            the Edge program although they are not Core ATen.
        _preserve_ops: operators that the Core ATen decomposition keeps as
            they are (they are also exempt from the Core ATen check).
        _skip_dim_order: keep `aten._to_copy`/`aten.clone` with memory
            formats instead of rewriting them into `dim_order_ops`.
    """

    _check_ir_validity: bool = True
    _core_aten_ops_exception_list: List[Any] = field(default_factory=list)
    _preserve_ops: List[Any] = field(default_factory=list)
    _skip_dim_order: bool = False


@dataclass
class ExecutorchBackendConfig:
    """Options of `to_executorch`.

    Attributes:
        passes: user passes run on each method's Edge graph first.
        memory_planning_pass: assigns planned memory to every non-constant
            tensor (a `MemoryPlanningPass` or any callable with its `run`
            signature).
        segment_alignment: alignment of data segments in the `.pte` file.
        constant_tensor_alignment: alignment of each tensor inside the
            constant segment.
        extract_delegate_segments: move delegate blobs out of the flatbuffer
            into segments.
        emit_stacktrace: record each instruction's Python stack in the
            program (Chain.stacktrace).
        remove_view_copy: let static reshapes of intermediate values alias
            their input's memory instead of running a view_copy kernel.
        kernel_library: the operators the target runtime has kernels for
            (a `KernelLibrary`); an operator outside it fails `to_executorch`
            with its source line. Defaults to the portable kernels and prim
            ops; None skips the check.
        print_memory_summary: print `ExecutorchProgramManager.memory_summary()`
            (planned bytes of each method, per buffer, at the upper bounds of
            dynamic sizes) when the program is built.
    """

    passes: List[Any] = field(default_factory=list)
    memory_planning_pass: Optional[Any] = None
    segment_alignment: int = 128
    constant_tensor_alignment: int = 16
    extract_delegate_segments: bool = True
    emit_stacktrace: bool = False
    remove_view_copy: bool = True
    kernel_library: Optional[Any] = "portable"
    print_memory_summary: bool = False

    def __post_init__(self):
        if self.memory_planning_pass is None:
            from executorch.exir.passes.memory_planning_pass import (
                MemoryPlanningPass,
            )

            self.memory_planning_pass = MemoryPlanningPass()
        if self.kernel_library == "portable":
            from executorch.exir.kernel_check import KernelLibrary

            self.kernel_library = KernelLibrary.portable()
