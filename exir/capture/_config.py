"""Configuration of the two compilation stages: `to_edge` (EdgeCompileConfig)
and `to_executorch` (ExecutorchBackendConfig)."""

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Union

from executorch.exir.dynamic_shape import DynamicMemoryPlanningMode


@dataclass
class CaptureConfig:
    """Options of upstream's legacy `exir.capture` entry point, kept so that
    scripts building one (e.g. `get_xnnpack_capture_config()`) still run;
    `torch.export.export` is the capture step here, and these options do
    not change it."""

    pt2_mode: bool = True
    enable_functionalization: bool = True
    enable_dynamic_shape: bool = False
    enable_aot: bool = False
    _unlift: bool = False
    _use_old_decomp_table: bool = False


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
        fuse_quantized_weights: turn linear layers whose weights torchao's
            `quantize_` or PT2E's dynamic configuration quantized to 4 or 8
            bits into `et_quantized::*_linear` kernels that read packed
            weights (smaller programs, integer arithmetic), and embeddings
            quantized to 2, 4 or 8 bits into upstream's
            `quantized_decomposed::embedding_*bit` operators; False keeps
            torch's decomposition into portable operators.
    """

    _check_ir_validity: bool = True
    _core_aten_ops_exception_list: List[Any] = field(default_factory=list)
    _preserve_ops: List[Any] = field(default_factory=list)
    _skip_dim_order: bool = False
    fuse_quantized_weights: bool = True


@dataclass
class ExecutorchBackendConfig:
    """Options of `to_executorch`.

    Attributes:
        passes: user passes run on each method's Edge graph first.
        memory_planning_pass: assigns planned memory to every non-constant
            tensor (a `MemoryPlanningPass` or any object with its `run`
            signature), or a dict of them by method name.
        to_out_var_pass: replaces functional operator calls by out
            variants (a `ToOutVarPass`).
        sym_shape_eval_pass: how symbolic sizes are planned, or a dict by
            method name: `ConstraintBasedSymShapeEvalPass` (the upper bounds
            of the export's ranges; `HintBasedSymShapeEvalPass` plans the
            same here, see exir/passes/sym_shape_eval_pass.py).
        dynamic_memory_planning_mode: `DynamicMemoryPlanningMode.UPPER_BOUND`,
            the only mode (SYMBOLIC raises NotImplementedError).
        segment_alignment: alignment of data segments in the `.pte` file.
        constant_tensor_alignment: alignment of each tensor inside the
            constant segment.
        extract_delegate_segments: move delegate blobs out of the flatbuffer
            into segments.
        emit_stacktrace: record each instruction's Python stack in the
            program (Chain.stacktrace).
        remove_view_copy: let static reshapes of intermediate values, and
            copies that move no bytes (contiguous clones, squeezes,
            permutes of size-1 dims, selects and slices of one block),
            alias their input's memory instead of running a copy kernel.
        kernel_library: the operators the target runtime has kernels for
            (a `KernelLibrary`); an operator outside it fails `to_executorch`
            with its source line. Defaults to the portable and quantized
            kernels and prim ops (`KernelLibrary.default()`); None skips the
            check.
        print_memory_summary: print `ExecutorchProgramManager.memory_summary()`
            (planned bytes of each method, per buffer, at the upper bounds of
            dynamic sizes) when the program is built.
        enable_non_cpu_memory_planning: upstream's switch for planning
            tensors that live on other devices into buffers of their own;
            every tensor here lives in CPU memory, so the plan is the same
            either way.
        external_constants: store the program's constants (parameters and
            buffers) in a `.ptd` file instead of the `.pte`: True puts them
            all in "_default_external_constant.ptd"; a function of the
            placeholder node returns the file name (without ".ptd") for each
            constant, or None to keep it in the `.pte`. The files are written
            by `ExecutorchProgramManager.write_tensor_data_to_file(dir)`.
        do_quant_fusion_and_const_prop: upstream's switch for fusing
            quantized patterns and folding constants at this stage. Accepted
            for compatibility and changes nothing: quantized weights are
            already fused by `to_edge` (`EdgeCompileConfig`'s
            `fuse_quantized_weights`), and folding constants at export is
            `fold_constants` (below).
        fold_constants (ours, not upstream's): compute layout copies of
            constants (a linear's weight transpose) and inference batch norms
            after a convolution once, at export, instead of on every call
            (`FoldConstantLayoutsPass`, `FoldBatchNormPass`). False keeps the
            Edge program's operator calls as they are, as upstream emits them.
            Never done when `external_constants` is set: `.ptd` weights keep
            their names and layouts.
    """

    passes: List[Any] = field(default_factory=list)
    memory_planning_pass: Optional[Union[Any, Dict[str, Any]]] = None
    to_out_var_pass: Optional[Any] = None
    sym_shape_eval_pass: Optional[Union[Any, Dict[str, Any]]] = None
    dynamic_memory_planning_mode: DynamicMemoryPlanningMode = (
        DynamicMemoryPlanningMode.UPPER_BOUND
    )
    segment_alignment: int = 128
    constant_tensor_alignment: int = 16
    extract_delegate_segments: bool = True
    emit_stacktrace: bool = False
    remove_view_copy: bool = True
    kernel_library: Optional[Any] = "default"
    print_memory_summary: bool = False
    enable_non_cpu_memory_planning: bool = False
    external_constants: Union[bool, Callable[[Any], Optional[str]]] = False
    do_quant_fusion_and_const_prop: bool = False
    fold_constants: bool = True

    def __post_init__(self):
        if self.memory_planning_pass is None:
            from executorch.exir.passes.memory_planning_pass import (
                MemoryPlanningPass,
            )

            self.memory_planning_pass = MemoryPlanningPass()
        if self.to_out_var_pass is None:
            from executorch.exir.passes.to_out_var_pass import ToOutVarPass

            self.to_out_var_pass = ToOutVarPass()
        self._check_sym_shape_eval_pass()
        if self.dynamic_memory_planning_mode != DynamicMemoryPlanningMode.UPPER_BOUND:
            raise NotImplementedError(
                f"dynamic_memory_planning_mode={self.dynamic_memory_planning_mode}: "
                "dynamic tensors are planned at their upper bounds only "
                "(DynamicMemoryPlanningMode.UPPER_BOUND)"
            )
        if self.kernel_library == "default":
            from executorch.exir.kernel_check import KernelLibrary

            self.kernel_library = KernelLibrary.default()

    def _check_sym_shape_eval_pass(self):
        from executorch.exir.passes.sym_shape_eval_pass import (
            ConstraintBasedSymShapeEvalPass,
        )

        chosen = self.sym_shape_eval_pass
        by_method = chosen if isinstance(chosen, dict) else {"every method": chosen}
        for method, sym_pass in by_method.items():
            if sym_pass is not None and not isinstance(
                sym_pass, ConstraintBasedSymShapeEvalPass
            ):
                raise TypeError(
                    f"sym_shape_eval_pass for {method}: {sym_pass!r} is not a "
                    "ConstraintBasedSymShapeEvalPass; dynamic tensors are "
                    "planned at the upper bounds of their ranges"
                )

    def method_memory_planning_pass(self, method: str):
        """The memory planning pass of `method`: the one given for it in a
        dict, or the single one given for all."""
        chosen = self.memory_planning_pass
        if not isinstance(chosen, dict):
            return chosen
        if method not in chosen:
            raise KeyError(
                f"memory_planning_pass has no entry for method '{method}' "
                f"(it names {sorted(chosen)})"
            )
        return chosen[method]
