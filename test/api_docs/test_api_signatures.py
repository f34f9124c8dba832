"""Every public name issue #22 lists is importable with upstream
ExecuTorch's signature. Upstream is not a dependency, so this file keeps
upstream's signatures as a table (parameter names, order and defaults,
from upstream 1.5.1's source and API reference).

A signature matches when every upstream parameter is ours too, in the same
position if it can be passed positionally, with the same default; extra
parameters of ours must be optional, so that any call written for
upstream's function works here.
"""

import importlib
import inspect

import pytest

# (module, qualified name) -> upstream's parameters as written in a def
# (without annotations), or "property" / "attribute".
UPSTREAM = {
    # XNNPACK helpers.
    ("executorch.backends.xnnpack.utils.configs", "get_xnnpack_edge_compile_config"): "",
    ("executorch.backends.xnnpack.utils.configs", "get_transform_passes"): "additional_passes=None",
    ("executorch.backends.xnnpack.utils.configs", "get_xnnpack_executorch_backend_config"): "additional_passes=None",
    ("executorch.backends.xnnpack.utils.configs", "get_xnnpack_capture_config"): "dynamic_shape=False, enable_aot=None, unlift=None",
    ("executorch.backends.xnnpack.partition.xnnpack_partitioner", "XnnpackPartitioner.__init__"): "self, configs=None, config_precisions=None, per_op_mode=False, verbose=False, **kwargs",
    ("executorch.backends.xnnpack.partition.config.xnnpack_config", "ConfigPrecisionType.FP32"): "attribute",
    ("executorch.backends.xnnpack.partition.config.xnnpack_config", "ConfigPrecisionType.STATIC_QUANT"): "attribute",
    ("executorch.backends.xnnpack.partition.config.xnnpack_config", "ConfigPrecisionType.DYNAMIC_QUANT"): "attribute",
    ("executorch.backends.xnnpack.partition.config", "ALL_PARTITIONER_CONFIGS"): "attribute",
    # The process-wide thread pool in the Python bindings (issue #14).
    ("executorch.extension.pybindings.portable_lib", "_unsafe_reset_threadpool"): "attribute",
    ("executorch.extension.pybindings.portable_lib", "_threadpool_get_thread_count"): "attribute",
    # Lowered modules and program managers.
    ("executorch.exir.lowered_backend_module", "LoweredBackendModule.buffer"): "self, extract_delegate_segments=False, segment_alignment=128, constant_tensor_alignment=None, delegate_alignment=None, memory_planning=None",
    ("executorch.exir.lowered_backend_module", "LoweredBackendModule.program"): "self, emit_stacktrace=False, memory_planning=None",
    ("executorch.exir.lowered_backend_module", "LoweredBackendModule.processed_bytes"): "property",
    ("executorch.exir.lowered_backend_module", "LoweredBackendModule.backend_id"): "property",
    ("executorch.exir.lowered_backend_module", "LoweredBackendModule.compile_specs"): "property",
    ("executorch.exir.lowered_backend_module", "LoweredBackendModule.original_module"): "property",
    ("executorch.exir.backend.backend_api", "LoweredBackendModule"): "attribute",
    ("executorch.exir", "ExecutorchProgramManager.buffer"): "property",
    ("executorch.exir", "ExecutorchProgramManager.config_methods"): "property",
    ("executorch.exir", "ExecutorchProgramManager.methods"): "property",
    ("executorch.exir", "ExecutorchProgramManager.debug_handle_map"): "property",
    ("executorch.exir", "ExecutorchProgramManager.delegate_map"): "property",
    ("executorch.exir", "ExecutorchProgramManager.executorch_program"): "property",
    ("executorch.exir", "ExecutorchProgramManager.dump_executorch_program"): "self, verbose=False",
    ("executorch.exir", "ExecutorchProgramManager.exported_program"): "self, method_name='forward'",
    ("executorch.exir", "ExecutorchProgramManager.write_to_file"): "self, open_file",
    ("executorch.exir", "ExecutorchProgramManager.save"): "self, path",
    ("executorch.exir", "EdgeProgramManager.transform"): "self, passes, compile_config=None",
    ("executorch.exir", "EdgeProgramManager.exported_program"): "self, method_name='forward'",
    ("executorch.exir", "EdgeProgramManager.methods"): "property",
    ("executorch.exir", "EdgeProgramManager.config_methods"): "property",
    ("executorch.exir", "EdgeProgramManager.to_backend"): "self, partitioner",
    ("executorch.exir", "EdgeProgramManager.to_executorch"): "self, config=None",
    ("executorch.exir", "to_edge"): "programs, constant_methods=None, compile_config=None, generate_etrecord=False",
    ("executorch.exir", "to_edge_transform_and_lower"): "programs, transform_passes=None, partitioner=None, constant_methods=None, compile_config=None, generate_etrecord=False",
    ("executorch.exir", "CaptureConfig"): "attribute",
    # The demo backend and partitioners.
    ("executorch.exir.backend.test.backend_with_compiler_demo", "BackendWithCompilerDemo.preprocess"): "edge_program, compile_specs",
    ("executorch.exir.backend.test.op_partitioner_demo", "AddMulPartitionerDemo.__init__"): "self",
    ("executorch.exir.backend.test.op_partitioner_demo", "AddMulPartitionerDemo.partition"): "self, exported_program",
    ("executorch.exir.backend.test.op_partitioner_demo", "AddAttributePartitionerDemo.__init__"): "self",
    ("executorch.exir.backend.test.op_partitioner_demo", "AddAttributePartitionerDemo.partition"): "self, edge_exported_program",
    ("executorch.exir.backend.canonical_partitioners.pattern_op_partitioner", "generate_pattern_op_partitions"): "graph_module, patterns=None, partitions_list=None, op_support=None, ignore_literals=False",
    ("executorch.exir.backend.canonical_partitioners.duplicate_dequant_node_pass", "DuplicateDequantNodePass"): "attribute",
    # Memory planning.
    ("executorch.exir.passes", "MemoryPlanningPass.__init__"): "self, memory_planning_algo=None, allow_lifetime_and_storage_overlap=False, alloc_graph_input=True, alloc_graph_output=True, alloc_mutable_buffers=True, share_mutable_buffers=False, alignment=16",
    ("executorch.exir.capture._config", "ExecutorchBackendConfig.enable_non_cpu_memory_planning"): "attribute",
    ("executorch.exir.capture._config", "ExecutorchBackendConfig.memory_planning_pass"): "attribute",
    ("executorch.util.activation_memory_profiler", "generate_memory_trace"): "executorch_program_manager, chrome_trace_filename, enable_memory_offsets=False, method_name='forward'",
    # Edge dialect introspection.
    ("executorch.exir.dialects._ops", "bind_pattern_to_op"): "library, schema_or_name",
    ("executorch.exir.dialects._ops", "ops"): "attribute",
    # Delegation reports and version.
    ("executorch.devtools.backend_debug", "get_delegation_info"): "graph_module",
    ("executorch.exir.backend.utils", "format_delegated_graph"): "graph_module",
    ("executorch.version", "__version__"): "attribute",
    ("executorch.version", "git_version"): "attribute",
    # External constants (helper xnn's part of the delegate-interop issue).
    ("executorch.exir.passes.external_constants_pass", "external_constants_pass"): "gm",
    ("executorch.exir.capture._config", "ExecutorchBackendConfig.external_constants"): "attribute",
    ("executorch.exir.passes.external_constants_pass", "delegate_external_constants_pass_unlifted"): "module, gen_tag_fn=None",
    ("executorch.exir", "ExecutorchProgramManager.write_tensor_data_to_file"): "self, outdir",
}

def _resolve(module: str, qualname: str):
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        if inspect.isclass(obj) and hasattr(obj, "__dataclass_fields__"):
            fields = obj.__dataclass_fields__
            if part in fields:
                return fields[part]
        obj = inspect.getattr_static(obj, part) if inspect.isclass(obj) else getattr(obj, part)
    return obj


def _upstream_parameters(text: str):
    """Parameters of `def f(<text>): ...`."""
    namespace = {}
    exec(f"def f({text}): pass", namespace)
    return list(inspect.signature(namespace["f"]).parameters.values())


def _check_accepts(ours, upstream, where):
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    by_name = {p.name: p for p in ours}
    for index, want in enumerate(upstream):
        if want.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            assert any(p.kind == want.kind for p in ours), f"{where}: no {want}"
            continue
        assert want.name in by_name, f"{where}: parameter '{want.name}' missing"
        got = by_name[want.name]
        if want.kind in positional:
            assert ours.index(got) == index, f"{where}: '{want.name}' at a different position"
        assert got.default == want.default, (
            f"{where}: '{want.name}' defaults to {got.default!r}, upstream {want.default!r}"
        )
    names = {p.name for p in upstream}
    for extra in ours:
        if extra.name not in names and extra.kind not in (
            inspect.Parameter.VAR_POSITIONAL,
            inspect.Parameter.VAR_KEYWORD,
        ):
            assert extra.default is not inspect.Parameter.empty, (
                f"{where}: extra parameter '{extra.name}' is required"
            )


def _cases():
    for (module, qualname), expected in UPSTREAM.items():
        yield pytest.param(module, qualname, expected, id=f"{module}:{qualname}")


@pytest.mark.parametrize("module, qualname, expected", list(_cases()))
def test_name_has_upstream_signature(module, qualname, expected):
    obj = _resolve(module, qualname)
    where = f"{module}.{qualname}"
    if expected == "attribute":
        return
    if expected == "property":
        assert isinstance(obj, property), f"{where} is not a property"
        return
    if isinstance(obj, staticmethod):
        obj = obj.__func__
    ours = list(inspect.signature(obj).parameters.values())
    _check_accepts(ours, _upstream_parameters(expected), where)
