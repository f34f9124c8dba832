"""A partition lowered to a backend, and the operator that calls it.

In a graph, a delegated partition is

    %lowered_module_0 = get_attr[lowered_module_0]
    %call = call_function[executorch_call_delegate](%lowered_module_0, %x, %w)
    %out = call_function[getitem](%call, 0)

which the emitter turns into a DelegateCall of the module's blob.
"""

import operator
from typing import TYPE_CHECKING, Any, Dict, List, Optional

import torch
from torch._C import DispatchKey
from torch._higher_order_ops.utils import autograd_not_implemented
from torch._ops import HigherOrderOperator
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import (
    ProxyTorchDispatchMode,
    disable_proxy_modes_tracing,
    track_tensor_tree,
)
from torch.utils import _pytree as pytree
from torch.export import ExportedProgram

from executorch.exir._serialize._named_data_store import NamedDataStoreOutput

if TYPE_CHECKING:
    from executorch.exir.backend.compile_spec_schema import CompileSpec


class LoweredBackendModule(torch.nn.Module):
    """The output of a backend's `preprocess` for one Edge program.

    Attributes:
        backend_id: the backend that runs `processed_bytes`.
        processed_bytes: the blob stored in the program.
        compile_specs: stored with the blob for the runtime backend.
        original_module: the Edge program the blob implements (used to run
            the delegate eagerly and to trace shapes).
        meta: "debug_handle_map", when the backend's preprocess gave one:
            the backend's own event ids to the debug handles of the nodes
            each covers (for the ETRecord's delegate map).
        named_data_store_output: data the blob refers to by key (stored in
            the program's named data or in `.ptd` files), or None.
    """

    def __init__(
        self,
        edge_program: ExportedProgram,
        backend_id: str,
        processed_bytes: bytes,
        compile_specs: List["CompileSpec"],
        named_data_store_output: Optional[NamedDataStoreOutput] = None,
    ):
        super().__init__()
        self._original_exported_program = edge_program
        self._backend_id = backend_id
        self._processed_bytes = processed_bytes
        self._compile_specs = list(compile_specs)
        self.meta: Dict[str, Any] = {}
        self._named_data_store_output = named_data_store_output

    @property
    def backend_id(self) -> str:
        return self._backend_id

    @property
    def processed_bytes(self) -> bytes:
        return self._processed_bytes

    @property
    def compile_specs(self) -> List["CompileSpec"]:
        return self._compile_specs

    @property
    def named_data_store_output(self) -> Optional[NamedDataStoreOutput]:
        return self._named_data_store_output

    @property
    def original_module(self) -> ExportedProgram:
        return self._original_exported_program

    def program(self, emit_stacktrace: bool = False, memory_planning=None):
        """The emitted program (flatbuffer object API) whose "forward"
        method runs this delegate on the original program's user inputs."""
        return self._executorch_program(
            emit_stacktrace=emit_stacktrace, memory_planning=memory_planning
        ).executorch_program

    def buffer(
        self,
        extract_delegate_segments: bool = False,
        segment_alignment: int = 128,
        constant_tensor_alignment: Optional[int] = None,
        delegate_alignment: Optional[int] = None,
        memory_planning=None,
    ) -> bytes:
        """The `.pte` bytes of `program()`: a program that runs only this
        delegate. `delegate_alignment` is accepted for upstream
        compatibility; segments are aligned to `segment_alignment`."""
        options = dict(
            extract_delegate_segments=extract_delegate_segments,
            segment_alignment=segment_alignment,
        )
        if constant_tensor_alignment is not None:
            options["constant_tensor_alignment"] = constant_tensor_alignment
        return self._executorch_program(
            memory_planning=memory_planning, **options
        ).buffer

    def _executorch_program(self, memory_planning=None, **options):
        # Imported here: the program managers import this module.
        from executorch.exir.capture._config import ExecutorchBackendConfig
        from executorch.exir.program._program import ExecutorchProgramManager

        if memory_planning is not None:
            options["memory_planning_pass"] = memory_planning
        return ExecutorchProgramManager(
            {"forward": self._calling_program()}, {}, ExecutorchBackendConfig(**options)
        )

    def _calling_program(self) -> ExportedProgram:
        """An Edge program with this module as its only operation:
        placeholders for the original's user inputs, one delegate call, its
        results as outputs."""
        from torch.export.exported_program import ModuleCallEntry, ModuleCallSignature
        from torch.export.graph_signature import (
            ExportGraphSignature,
            InputKind,
            InputSpec,
            OutputKind,
            OutputSpec,
            TensorArgument,
        )

        from executorch.exir.verification.verifier import EXIREdgeDialectVerifier

        original = self.original_module
        user_inputs = set(original.graph_signature.user_inputs)
        user_outputs = list(original.graph_signature.user_outputs)
        graph = torch.fx.Graph()
        args = []
        for node in original.graph.nodes:
            if node.op == "placeholder" and node.name in user_inputs:
                placeholder = graph.placeholder(node.name)
                placeholder.meta = dict(node.meta)
                args.append(placeholder)
        root = torch.nn.Module()
        root.lowered_module_0 = self
        module = graph.get_attr("lowered_module_0")
        call = graph.call_function(executorch_call_delegate, (module, *args))
        returned = {
            getattr(n, "name", None): n
            for n in original.graph.output_node().args[0]
        }
        if original.call_spec.out_spec.is_leaf():
            # One output: the call yields the tensor itself.
            call.meta = dict(returned[user_outputs[0]].meta)
            outputs = [call]
        else:
            call.meta["val"] = tuple(
                returned[name].meta["val"] for name in user_outputs
            )
            outputs = []
            for i, name in enumerate(user_outputs):
                item = graph.call_function(operator.getitem, (call, i))
                item.meta = dict(returned[name].meta)
                outputs.append(item)
        graph.output(tuple(outputs))
        gm = torch.fx.GraphModule(root, graph)
        signature = ExportGraphSignature(
            [
                InputSpec(InputKind.USER_INPUT, TensorArgument(a.name), None)
                for a in args
            ],
            [
                OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(o.name), None)
                for o in outputs
            ],
        )
        call_signature = ModuleCallSignature(
            inputs=[],
            outputs=[],
            in_spec=original.call_spec.in_spec,
            out_spec=original.call_spec.out_spec,
        )
        return ExportedProgram(
            root=gm,
            graph=graph,
            graph_signature=signature,
            state_dict={},
            range_constraints=dict(original.range_constraints),
            module_call_graph=[ModuleCallEntry("", call_signature)],
            verifiers=[EXIREdgeDialectVerifier],
        )

    def forward(self, *args):
        return executorch_call_delegate(self, *args)


class _ExecutorchCallDelegate(HigherOrderOperator):
    """Calls a LoweredBackendModule on tensors; returns what its original
    program returns (a tuple for a partition `to_backend` delegated, read
    with getitem; a tensor when the whole program had one output)."""

    def __init__(self):
        super().__init__("executorch_call_delegate")

    def __call__(self, lowered_module, *args):
        return super().__call__(lowered_module, *args)


executorch_call_delegate = _ExecutorchCallDelegate()


def _run_original(lowered_module: LoweredBackendModule, *args):
    # Eagerly, a delegate computes what the program it was lowered from does.
    return lowered_module.original_module.module()(*args)


executorch_call_delegate.py_impl(DispatchKey.CompositeExplicitAutograd)(_run_original)
# Under torch.export a lowered module inside a larger module stays one call
# (Flow 2 of upstream's delegation docs): autograd is not traced through it,
# fake tensors run the original program, functionalization passes through,
# and the tracer records the call with the module as a submodule.
executorch_call_delegate.py_impl(DispatchKey.Autograd)(
    autograd_not_implemented(executorch_call_delegate, deferred_error=True)
)


@executorch_call_delegate.py_impl(FakeTensorMode)
def _run_fake(mode, lowered_module, *args):
    with mode:
        return _run_original(lowered_module, *args)


@executorch_call_delegate.py_functionalize_impl
def _run_functional(ctx, lowered_module, *args):
    unwrapped = ctx.unwrap_tensors(args)
    with ctx.redispatch_to_next():
        return ctx.wrap_tensors(executorch_call_delegate(lowered_module, *unwrapped))


@executorch_call_delegate.py_impl(ProxyTorchDispatchMode)
def _trace(mode, lowered_module, *args):
    with disable_proxy_modes_tracing():
        out = executorch_call_delegate(lowered_module, *args)
    tracer = mode.tracer
    name = next(
        (n for n, m in tracer.root.named_children() if m is lowered_module), None
    )
    if name is None:
        name = tracer.get_fresh_qualname("lowered_module_")
        tracer.root.register_module(name, lowered_module)
    module_proxy = tracer.create_proxy("get_attr", name, (), {})
    proxy_args = pytree.tree_map(tracer.unwrap_proxy, args)
    out_proxy = tracer.create_proxy(
        "call_function",
        executorch_call_delegate,
        (module_proxy, *proxy_args),
        {},
        name="executorch_call_delegate",
    )
    return track_tensor_tree(out, out_proxy, constant=None, tracer=tracer)
