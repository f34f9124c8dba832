"""Tester: a module and its example inputs taken through the pipeline one
stage at a time, then run on our runtime and compared with eager PyTorch.

    Tester(module, (x,)).export().to_edge().partition(XnnpackPartitioner())
        .to_executorch().serialize().run_method_and_compare_outputs()

Each stage consumes the previous stage's artifact (get_artifact() returns the
latest), so a test can stop after any stage and inspect it. Skipping stages
is allowed where the pipeline allows it: to_executorch() after export() runs
to_edge() first, serialize() after anything runs what is missing.

Comparisons use one tolerance table, TOLERANCES below; every suite that
compares our outputs with eager goes through it.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Optional, Sequence

import torch

# Tolerances per result dtype, as (rtol, atol) for torch.testing.assert_close.
#
# Why these numbers (the reasoning is written here once):
# - "exact": outputs that only select, move or count elements (nonzero,
#   masked_select, views, integer arithmetic) must be bit-identical in
#   every dtype.
# - Integer and bool results are always exact: the kernels compute them with
#   the same integer arithmetic as eager.
# - float32 "pointwise": each element comes from a few operations in the
#   same order as eager's, but libm implementations and fused or reordered
#   arithmetic (x * a + b, exp of a sum) differ in the last bits. These are
#   torch.testing.assert_close's own float32 defaults (rtol 1.3e-6, about
#   10 ulp, atol 1e-5), which still catch any indexing or formula bug.
# - float32 "accumulating": matrix products, convolutions, norms, FFTs and
#   long reductions sum many terms in a different order (blocked, vectorised
#   or threaded) than eager; the rounding error grows with the length of
#   the sum, so relative error gets 1e-4. Absolute error stays at 1e-5 (the
#   values in our tests are O(1) or larger).
#   The same bound covers XNNPACK's polynomial approximations of
#   transcendental functions (sigmoid, elu, softmax).
# - float64 and complex128 keep eight more digits than float32.
# - float16 and bfloat16 have 11 and 8 significand bits (relative precision
#   about 1e-3 and 8e-3); our kernels compute them in float and round once,
#   eager sometimes rounds intermediate results, so two roundings apart:
#   1e-2 relative and absolute.
# - "one_op": the result of a single operator call, as the operator sweep
#   (test/ops/op_check.py) checks each kernel at each dtype. Both sides
#   compute in float and round once, so a reduced-precision result may
#   differ by one unit in its last place (float16 1e-3, bfloat16 two ulps,
#   1.6e-2 relative); a float32 kernel in plain loops and libm against
#   eager's vectorised code differs by a few ulp per element and by
#   O(n * ulp) over a short reduction (1e-5 relative and absolute).
# - complex64 follows float32.
EXACT = "exact"
POINTWISE = "pointwise"
ACCUMULATING = "accumulating"
ONE_OP = "one_op"

_FLOAT32 = {
    EXACT: (0, 0),
    POINTWISE: (1.3e-6, 1e-5),
    ACCUMULATING: (1e-4, 1e-5),
    ONE_OP: (1e-5, 1e-5),
}
_FLOAT64 = {
    EXACT: (0, 0),
    POINTWISE: (1e-12, 1e-12),
    ACCUMULATING: (1e-10, 1e-12),
    ONE_OP: (1e-12, 1e-12),
}
_FLOAT16 = {
    EXACT: (0, 0),
    POINTWISE: (1e-2, 1e-2),
    ACCUMULATING: (1e-2, 1e-2),
    ONE_OP: (1e-3, 1e-3),
}
_BFLOAT16 = {**_FLOAT16, ONE_OP: (1.6e-2, 1e-2)}

TOLERANCES = {
    torch.float32: _FLOAT32,
    torch.complex64: _FLOAT32,
    torch.float64: _FLOAT64,
    torch.complex128: _FLOAT64,
    torch.float16: _FLOAT16,
    torch.bfloat16: _BFLOAT16,
}


def tolerance_for(dtype: torch.dtype, precision: str = POINTWISE) -> dict:
    """The rtol/atol keywords of assert_close for results of `dtype`."""
    if dtype not in TOLERANCES:
        return dict(rtol=0, atol=0)
    rtol, atol = TOLERANCES[dtype][precision]
    return dict(rtol=rtol, atol=atol)


class Tester:
    """Runs one module through export -> to_edge -> partition ->
    to_executorch -> serialize -> run, comparing with eager at the end.

    `dynamic_shapes` is passed to torch.export.export. `compile_config` (an
    EdgeCompileConfig) is used by to_edge unless that stage gets its own.
    """

    __test__ = False  # not a pytest test class, despite its name

    def __init__(
        self,
        module: torch.nn.Module,
        example_inputs: Sequence[Any],
        dynamic_shapes: Any = None,
        compile_config: Any = None,
    ):
        self.module = module.eval()
        # Eager runs on a copy taken now: lowering may change the module in
        # place, and a stateful module's runs must not change what export
        # captures.
        self.reference = copy.deepcopy(self.module)
        self.example_inputs = tuple(example_inputs)
        self.dynamic_shapes = dynamic_shapes
        self.compile_config = compile_config
        self.stages: dict = {}
        self._last: Optional[str] = None
        # The serialized program loaded on our runtime, once.
        self._program = None

    # -- stages ---------------------------------------------------------

    def _record(self, stage: str, artifact: Any) -> "Tester":
        self.stages[stage] = artifact
        self._last = stage
        return self

    def export(self, strict: Optional[bool] = None) -> "Tester":
        kwargs = {} if strict is None else {"strict": strict}
        exported = torch.export.export(
            self.module,
            self.example_inputs,
            dynamic_shapes=self.dynamic_shapes,
            **kwargs,
        )
        return self._record("export", exported)

    def to_edge(self, compile_config: Any = None, **kwargs) -> "Tester":
        from executorch.exir import to_edge

        if "export" not in self.stages:
            self.export()
        config = compile_config or self.compile_config
        if config is not None:
            kwargs["compile_config"] = config
        return self._record("to_edge", to_edge(self.stages["export"], **kwargs))

    def partition(self, partitioner: Any) -> "Tester":
        if "to_edge" not in self.stages:
            self.to_edge()
        lowered = self.stages["to_edge"].to_backend(partitioner)
        return self._record("partition", lowered)

    def to_edge_transform_and_lower(
        self, partitioners: Sequence[Any], **kwargs
    ) -> "Tester":
        from executorch.exir import to_edge_transform_and_lower

        if "export" not in self.stages:
            self.export()
        if self.compile_config is not None:
            kwargs.setdefault("compile_config", self.compile_config)
        lowered = to_edge_transform_and_lower(
            self.stages["export"], partitioner=list(partitioners), **kwargs
        )
        return self._record("partition", lowered)

    def to_executorch(self, config: Any = None) -> "Tester":
        if "partition" not in self.stages and "to_edge" not in self.stages:
            self.to_edge()
        edge = self.stages.get("partition", self.stages.get("to_edge"))
        program = edge.to_executorch() if config is None else edge.to_executorch(config)
        return self._record("to_executorch", program)

    def serialize(self) -> "Tester":
        if "to_executorch" not in self.stages:
            self.to_executorch()
        return self._record("serialize", self.stages["to_executorch"].buffer)

    def get_artifact(self, stage: Optional[str] = None) -> Any:
        """The artifact of `stage` (default: the last stage run)."""
        return self.stages[stage or self._last]

    # -- running and comparing -----------------------------------------

    def load(self) -> Any:
        """The serialized program loaded on our runtime (the Python
        bindings), once; its methods load on their first run."""
        from executorch.extension.pybindings.portable_lib import (
            _load_for_executorch_from_buffer,
        )

        if "serialize" not in self.stages:
            self.serialize()
        if self._program is None:
            self._program = _load_for_executorch_from_buffer(self.stages["serialize"])
        return self._program

    def run_method(
        self, method: str = "forward", inputs: Optional[Sequence[Any]] = None
    ) -> list:
        """Runs the serialized program on our runtime (the Python bindings)."""
        inputs = self.example_inputs if inputs is None else inputs
        return self.load().run_method(method, tuple(inputs))

    def run_method_and_compare_outputs(
        self,
        inputs: Optional[Sequence[Any]] = None,
        precision: str = POINTWISE,
        method: str = "forward",
        reference: Any = None,
    ) -> "Tester":
        """Runs `method` on `inputs` (default: the example inputs) and checks
        every output against eager (or `reference`, a callable standing in
        for the module) with the tolerance table's entry for its dtype."""
        inputs = tuple(self.example_inputs if inputs is None else inputs)
        if "serialize" not in self.stages:
            self.serialize()
        return self.compare_outputs(
            lambda: self.run_method(method, inputs), inputs, precision, method, reference
        )

    def compare_outputs(
        self,
        run: Callable[[], Sequence[Any]],
        inputs: Optional[Sequence[Any]] = None,
        precision: str = POINTWISE,
        method: str = "forward",
        reference: Any = None,
    ) -> "Tester":
        """Checks the outputs `run()` returns against eager's on `inputs`,
        for suites that run a stage's artifact some other way (a reference
        interpreter of the program, a delegate blob on its own)."""
        inputs = tuple(self.example_inputs if inputs is None else inputs)
        with torch.no_grad():
            eager = reference or (
                self.reference
                if method == "forward"
                else getattr(self.reference, method)
            )
            # Eager runs before `run`, which may write to its inputs.
            expected = _flatten(eager(*inputs))
        actual = run()
        assert len(actual) == len(expected), (
            f"{method}: {len(actual)} outputs from our runtime, "
            f"{len(expected)} from eager"
        )
        for index, (got, want) in enumerate(zip(actual, expected)):
            compare(got, want, precision, f"output {index}")
        return self


def _flatten(value: Any) -> list:
    """Eager outputs (tuples, lists, dicts, nested) as the flat list the
    program returns, in pytree order."""
    return torch.utils._pytree.tree_leaves(value)


def compare(got: Any, want: Any, precision: str = POINTWISE, what: str = "") -> None:
    """One output against its expected value with the table's tolerance."""
    if isinstance(want, torch.Tensor):
        if precision == EXACT:
            assert got.shape == want.shape, f"{what}: {got.shape} != {want.shape}"
        torch.testing.assert_close(
            got,
            want,
            **tolerance_for(want.dtype, precision),
            msg=lambda message: f"{what}: {message}",
        )
    else:
        assert got == want, f"{what}: {got!r} != {want!r}"
