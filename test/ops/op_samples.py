"""What the operator sweep covers and the inputs it feeds each operator.

Targets:
- every overload torch tags `torch.Tag.core` (group "core");
- the Edge operators our exporter emits: the `*_copy` forms of core views
  and the `dim_order_ops` copies (group "edge");
- the functional form of every other out-variant operator in
  kernels/portable/functions.yaml (group "non-core").

Samples come from PyTorch's OpInfo database where possible. OpInfos are
keyed by Python function, not by ATen overload, so `opinfo_index` records
(with a TorchDispatchMode) which overloads each OpInfo's float32 samples
reach, and `opinfo_samples` replays an OpInfo's samples at the wanted dtype
and keeps the exact arguments the target overload received. Overloads no
OpInfo reaches (backward ops, Scalar overloads, padding, ...) use the
hand-written samples in `OWN_SAMPLES`; failing both, the float32 OpInfo
samples cast to the dtype (eager then says whether it supports it). Up to
three samples are kept per
(operator, dtype): a regular one, one with a 0-dim tensor, one with an
empty tensor.
"""

import dataclasses
import functools
import os
from typing import Callable, Dict, Iterable, List, Optional

import torch
import yaml
from torch.testing import make_tensor
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map

from executorch.test.ops.op_check import op_name, Sample

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FUNCTIONS_YAML = os.path.join(_REPO, "kernels", "portable", "functions.yaml")

MAX_SAMPLES = 3

# Operators whose results are random or uninitialised: output count, dtypes
# and shapes are compared, and random ones are checked by their properties
# (random_check.py).
RANDOM_OPERATORS = {
    "aten::rand.default",
    "aten::randn.default",
    "aten::randperm.default",
    "aten::native_dropout.default",
    "aten::bernoulli.default",
    "aten::empty.memory_format",
    "aten::empty_strided.default",
    "dim_order_ops::_empty_dim_order.default",
}

DIM_ORDER_OPERATORS = (
    "dim_order_ops::_to_dim_order_copy.default",
    "dim_order_ops::_clone_dim_order.default",
)


@dataclasses.dataclass
class Target:
    """One operator of the sweep. `source` is the overload whose recorded
    OpInfo calls supply its samples (a view for its `*_copy` form)."""

    name: str
    group: str
    source: str


def resolve(name: str):
    """The OpOverload for `namespace::packet.overload`, or None."""
    namespace, qualified = name.split("::", 1)
    packet_name, _, overload = qualified.partition(".")
    packet = getattr(getattr(torch.ops, namespace), packet_name, None)
    return getattr(packet, overload or "default", None) if packet else None


def core_operators() -> List[str]:
    """Every aten overload tagged core, sorted."""
    names = set()
    for qualified in torch._C._dispatch_get_all_op_names():
        if qualified.startswith("aten::"):
            op = resolve(qualified)
            if op is not None and torch.Tag.core in op.tags:
                names.add(op_name(op))
    return sorted(names)


def _functional_of(out_op) -> Optional[str]:
    """The overload of `out_op`'s operator that takes the same arguments
    without the `out` tensors."""
    wanted = [
        (a.name, str(a.type))
        for a in out_op._schema.arguments
        if not (a.alias_info and a.alias_info.is_write)
    ]
    namespace, rest = op_name(out_op).split("::")
    packet = getattr(getattr(torch.ops, namespace), rest.split(".")[0])
    for overload in packet.overloads():
        candidate = getattr(packet, overload)
        args = [(a.name, str(a.type)) for a in candidate._schema.arguments]
        if not candidate._schema.is_mutable and args == wanted:
            return op_name(candidate)
    return None


def portable_functional_operators() -> List[str]:
    """Functional overloads of the out-variant kernels in functions.yaml."""
    with open(FUNCTIONS_YAML) as f:
        entries = yaml.safe_load(f) or []
    names = set()
    for entry in entries:
        raw = entry.get("op") or entry.get("func", "").split("(", 1)[0]
        op = resolve(raw if "::" in raw else f"aten::{raw}")
        functional = _functional_of(op) if op is not None else None
        if functional:
            names.add(functional)
    return sorted(names)


def _copy_form(view_name: str) -> Optional[str]:
    """`aten::<view>_copy.<overload>` when `view_name` is a view operator
    with a copying variant (what to_edge replaces it by), else None."""
    base, overload = view_name.split(".", 1)
    op = resolve(view_name)
    returns = op._schema.returns
    is_view = (
        len(returns) == 1
        and returns[0].alias_info is not None
        and not returns[0].alias_info.is_write
    )
    copy = f"{base}_copy.{overload}"
    return copy if is_view and resolve(copy) is not None else None


def targets() -> List[Target]:
    """Every operator of the full sweep, core first."""
    core = core_operators()
    found = [Target(name, "core", name) for name in core]
    copies = {}
    for name in core:
        copy = _copy_form(name)
        if copy:
            copies[copy] = name
    found += [Target(c, "edge", v) for c, v in sorted(copies.items())]
    found += [Target(name, "edge", name) for name in DIM_ORDER_OPERATORS]
    known = {t.name for t in found}
    for name in portable_functional_operators():
        if name not in known:
            found.append(Target(name, "non-core", _view_of(name) or name))
    return found


def _view_of(copy_name: str) -> Optional[str]:
    """`aten::<view>.<overload>` for a `*_copy` operator, if it exists: its
    OpInfo calls are the copy's samples."""
    base, overload = copy_name.split(".", 1)
    if not base.endswith("_copy"):
        return None
    view = f"{base[: -len('_copy')]}.{overload}"
    return view if resolve(view) is not None else None


class _CallRecorder(TorchDispatchMode):
    """Records (overload name, args, kwargs) of each operator dispatched,
    with tensors cloned at call time."""

    def __init__(self, keep: Optional[str] = None):
        super().__init__()
        self.keep = keep
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = op_name(func)
        if self.keep is None or name == self.keep:
            snapshot = tree_map(
                lambda v: v.detach().clone() if isinstance(v, torch.Tensor) else v,
                (args, kwargs),
            )
            self.calls.append((name, snapshot))
        return func(*args, **kwargs)


@functools.lru_cache(maxsize=None)
def _op_db() -> Dict[str, object]:
    from torch.testing._internal.common_methods_invocations import op_db

    return {_opinfo_key(op): op for op in op_db}


def _opinfo_key(op) -> str:
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


def _replay(opinfo, sample, recorder: _CallRecorder) -> None:
    try:
        with recorder:
            opinfo.op(sample.input, *sample.args, **sample.kwargs)
    except Exception:
        pass


def opinfo_index(samples_per_opinfo: int = 3) -> Dict[str, List[str]]:
    """Overload name -> keys of the OpInfos whose float32 samples call it,
    best first: OpInfos named like the operator, then those that call the
    fewest distinct overloads (the most direct ones)."""
    reached: Dict[str, set] = {}
    for key, opinfo in _op_db().items():
        try:
            samples = list(opinfo.sample_inputs("cpu", torch.float32))
        except Exception:
            continue
        recorder = _CallRecorder()
        for sample in samples[:samples_per_opinfo]:
            _replay(opinfo, sample, recorder)
        reached[key] = {name for name, _ in recorder.calls}
    index: Dict[str, List[str]] = {}
    for key, names in reached.items():
        for name in names:
            index.setdefault(name, []).append(key)
    for name, keys in index.items():
        base = name.split("::")[1].split(".")[0].strip("_")
        keys.sort(
            key=lambda k: (
                k.split(".")[-1] != base and k.rsplit(".", 1)[-1] != base,
                base not in k,
                len(reached[k]),
                k,
            )
        )
    return index


def opinfo_supports(opinfo_keys: Iterable[str], dtype: torch.dtype) -> bool:
    """Whether any of these OpInfos lists `dtype` as supported on CPU."""
    return any(dtype in _op_db()[key].supported_dtypes("cpu") for key in opinfo_keys)


def opinfo_samples(
    source: str, opinfo_keys: Iterable[str], dtype: torch.dtype, scan: int = 24
) -> List[Sample]:
    """Arguments `source` receives when the OpInfos' samples for `dtype`
    run (the first `scan` samples of each OpInfo that supports `dtype`),
    stopping once eight calls are recorded; only calls that have a tensor
    of `dtype` (or no tensor) count."""
    found = []
    for key in opinfo_keys:
        if len(found) >= 8:
            break
        opinfo = _op_db()[key]
        if dtype not in opinfo.supported_dtypes("cpu"):
            continue
        recorder = _CallRecorder(keep=source)
        try:
            for position, sample in enumerate(opinfo.sample_inputs("cpu", dtype)):
                if position >= scan:
                    break
                _replay(opinfo, sample, recorder)
        except Exception:
            continue
        found += [
            Sample(tuple(args), dict(kwargs)) for _, (args, kwargs) in recorder.calls
        ]
    return [s for s in found if _has_dtype(s, dtype)]


def _has_dtype(sample: Sample, dtype: torch.dtype) -> bool:
    """Whether a recorded call exercises `dtype`: some tensor argument has
    it (or it takes no tensors). OpInfos for ops that cast integer inputs
    first (fft, ...) reach the overload only with the cast result."""
    tensors = _tensors(sample)
    return not tensors or any(t.dtype == dtype for t in tensors)


def cast_samples(samples: List[Sample], dtype: torch.dtype) -> List[Sample]:
    """`samples` with every floating-point tensor converted to `dtype`:
    the same calls at another dtype, for OpInfos whose own samples at that
    dtype never reach the overload (clamp's reach clamp.Tensor instead)."""

    def cast(value):
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            return value.to(dtype)
        return value

    return [Sample(*tree_map(cast, (s.args, s.kwargs)), s.dynamic) for s in samples]


def _tensors(sample: Sample) -> List[torch.Tensor]:
    return [
        v
        for v in tree_flatten((sample.args, sample.kwargs))[0]
        if isinstance(v, torch.Tensor)
    ]


def representative(samples: List[Sample], limit: int = MAX_SAMPLES) -> List[Sample]:
    """Up to `limit` samples: the first regular one, the first with a 0-dim
    tensor, the first with an empty tensor, then the next ones in order."""

    def kind(sample: Sample) -> str:
        tensors = _tensors(sample)
        if any(t.numel() == 0 for t in tensors):
            return "empty"
        if any(t.dim() == 0 for t in tensors):
            return "0-dim"
        return "regular"

    chosen = []
    for wanted in ("regular", "0-dim", "empty"):
        match = next((s for s in samples if kind(s) == wanted), None)
        if match is not None:
            chosen.append(match)
    for sample in samples:
        if len(chosen) >= limit:
            break
        if all(sample is not c for c in chosen):
            chosen.append(sample)
    return chosen[:limit]


def _scalar_for(dtype: torch.dtype):
    if dtype == torch.bool:
        return True
    return 2.5 if dtype.is_floating_point else 3


def _complex_or_real(real: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A complex tensor whose real part has `dtype` (float32/float64), the
    input of complex-to-real FFTs; other dtypes stay real (eager rejects
    them)."""
    complex_of = {torch.float32: torch.complex64, torch.float64: torch.complex128}
    return real.to(complex_of[dtype]) if dtype in complex_of else real


def _in_float(op, x, *args):
    """`op(x, *args)` computed in float32 (16-bit floats in their own type),
    with tensor results in x's dtype: normalization statistics for any
    dtype, so eager itself says which dtypes the gradient supports."""
    keep = x.dtype in (torch.float16, torch.bfloat16, torch.float64)
    results = op(x if keep else x.float(), *args)
    return [r.to(x.dtype) for r in results]


def _layer_norm_backward_sample(make) -> Sample:
    """A layer norm gradient at the mean and rstd its forward pass saves."""
    x, weight, bias = make(2, 3, 4), make(4), make(4)
    _, mean, rstd = _in_float(
        torch.ops.aten.native_layer_norm, x, [4], None, None, 1e-5
    )
    return Sample((make(2, 3, 4), x, [4], mean, rstd, weight, bias, [True, True, True]))


def _group_norm_backward_sample(make) -> Sample:
    """A group norm gradient at the mean and rstd its forward pass saves."""
    x, weight = make(2, 4, 3), make(4)
    _, mean, rstd = _in_float(
        torch.ops.aten.native_group_norm, x, None, None, 2, 4, 3, 2, 1e-5
    )
    return Sample(
        (make(2, 4, 3), x, mean, rstd, weight, 2, 4, 3, 2, [True, True, True])
    )


def _long(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.long)


SampleBuilder = Callable[[Callable[..., torch.Tensor], torch.dtype], List[Sample]]

# Hand-written samples: `builder(make, dtype)`, where `make(*shape, **kw)`
# makes a tensor of the dtype under test.
OWN_SAMPLES: Dict[str, SampleBuilder] = {
    "aten::_adaptive_avg_pool2d_backward.default": lambda m, d: [
        Sample((m(2, 3, 2, 2), m(2, 3, 5, 5)))
    ],
    "aten::_embedding_bag.default": lambda m, d: [
        Sample((m(10, 4), _long([0, 2, 4, 5, 4, 3, 2, 9]), _long([0, 4])))
    ],
    "aten::_native_batch_norm_legit.no_stats": lambda m, d: [
        Sample((m(2, 3, 4, 4), m(3), m(3), True, 0.1, 1e-5))
    ],
    "aten::_native_batch_norm_legit_no_training.default": lambda m, d: [
        Sample((m(2, 3, 4, 4), m(3), m(3), m(3), m(3, low=0.5, high=2.0), 0.1, 1e-5))
    ],
    "aten::adaptive_avg_pool1d.default": lambda m, d: [Sample((m(2, 3, 8), [4]))],
    "aten::any.dims": lambda m, d: [Sample((m(2, 3, 4), [0, 2]))],
    "aten::avg_pool1d.default": lambda m, d: [Sample((m(2, 3, 8), [2], [2]))],
    "aten::avg_pool2d_backward.default": lambda m, d: [
        Sample(
            (m(1, 2, 2, 2), m(1, 2, 4, 4), [2, 2], [2, 2], [0, 0], False, True, None)
        )
    ],
    "aten::col2im.default": lambda m, d: [
        Sample((m(1, 12, 9), [4, 4], [2, 2], [1, 1], [0, 0], [1, 1]))
    ],
    "aten::convolution_backward.default": lambda m, d: [
        Sample(
            (m(1, 4, 3, 3), m(1, 2, 5, 5), m(4, 2, 3, 3), [4], [1, 1], [0, 0], [1, 1])
            + (False, [0, 0], 1, [True, True, True])
        )
    ],
    "aten::_fft_c2r.default": lambda m, d: [
        Sample((_complex_or_real(m(4, 5), d), [1], 0, 8)),
        Sample((_complex_or_real(m(3, 6, 4), d), [1, 2], 1, 7)),
    ],
    "aten::_fft_c2c.default": lambda m, d: [
        Sample((_complex_or_real(m(3, 6, 5), d), [1, 2], 2, False)),
        Sample((_complex_or_real(m(2, 12), d), [-1], 1, True)),
    ],
    "aten::atan2.out": lambda m, d: [Sample((m(3, 4), m(3, 4)), {"out": m(3, 4)})],
    "aten::copy.default": lambda m, d: [Sample((m(3, 4), m(4)))],
    "aten::fill.Tensor": lambda m, d: [Sample((m(3, 4), m()))],
    "aten::repeat_interleave.Tensor": lambda m, d: [
        Sample((torch.tensor([1, 2, 0, 3]).to(d),), {"output_size": 6})
    ],
    "aten::split.Tensor": lambda m, d: [Sample((m(7, 3), 2))],
    "aten::sym_is_contiguous.default": lambda m, d: [Sample((m(3, 4),), dynamic=True)],
    "aten::div.Scalar_mode": lambda m, d: [
        Sample((m(3, 4), 3), {"rounding_mode": "floor"}),
        Sample((m(3, 4), 3), {"rounding_mode": "trunc"}),
    ],
    "aten::embedding_dense_backward.default": lambda m, d: [
        Sample((m(5, 4), _long([0, 2, 2, 4, 1]), 6, -1, False))
    ],
    # Large enough for random_check's statistical bounds.
    "aten::native_dropout.default": lambda m, d: [
        Sample((m(64, 64), 0.3, True)),
        Sample((m(4, 5), 0.5, False)),
    ],
    "aten::native_group_norm_backward.default": lambda m, d: [
        _group_norm_backward_sample(m)
    ],
    "aten::native_layer_norm_backward.default": lambda m, d: [
        _layer_norm_backward_sample(m)
    ],
    "aten::pow.Scalar": lambda m, d: [Sample((_scalar_for(d), m(3, 4)))],
    "aten::rand.default": lambda m, d: [Sample(([64, 64],), {"dtype": d})],
    "aten::randn.default": lambda m, d: [Sample(([64, 64],), {"dtype": d})],
    "aten::randperm.default": lambda m, d: [Sample((100,), {"dtype": d})],
    "aten::reflection_pad1d.default": lambda m, d: [Sample((m(2, 3, 5), [2, 1]))],
    "aten::reflection_pad2d.default": lambda m, d: [
        Sample((m(1, 2, 4, 4), [1, 1, 2, 0]))
    ],
    "aten::reflection_pad3d.default": lambda m, d: [
        Sample((m(1, 2, 3, 4, 4), [1, 1, 1, 1, 1, 1]))
    ],
    "aten::replication_pad2d.default": lambda m, d: [
        Sample((m(1, 2, 4, 4), [1, 1, 2, 0]))
    ],
    "aten::replication_pad3d.default": lambda m, d: [
        Sample((m(1, 2, 3, 4, 4), [1, 1, 1, 1, 1, 1]))
    ],
    "aten::scatter.value": lambda m, d: [
        Sample((m(3, 5), 1, _long([[0, 1, 2, 0, 1]]), _scalar_for(d)))
    ],
    "aten::sym_size.int": lambda m, d: [Sample((m(3, 4), 1), dynamic=True)],
    "aten::sym_stride.int": lambda m, d: [Sample((m(3, 4), 0), dynamic=True)],
    "aten::sym_numel.default": lambda m, d: [Sample((m(3, 4),), dynamic=True)],
    "aten::sym_storage_offset.default": lambda m, d: [Sample((m(3, 4),), dynamic=True)],
    "aten::upsample_bilinear2d.vec": lambda m, d: [
        Sample((m(1, 2, 4, 4), [8, 8], False, None)),
        Sample((m(1, 2, 4, 4), None, True, [1.5, 1.5])),
    ],
    "aten::upsample_nearest2d.vec": lambda m, d: [
        Sample((m(1, 2, 4, 4), [8, 8], None)),
        Sample((m(1, 2, 4, 4), None, [2.0, 1.5])),
    ],
    "aten::var.dim": lambda m, d: [Sample((m(3, 4), [1], True, True))],
    "dim_order_ops::_to_dim_order_copy.default": lambda m, d: [
        Sample((m(2, 3, 4, 5),), {"dim_order": [0, 2, 3, 1]}),
        Sample((m(2, 3, 4),), {"dtype": torch.float32, "dim_order": [0, 1, 2]}),
    ],
    "dim_order_ops::_clone_dim_order.default": lambda m, d: [
        Sample((m(2, 3, 4, 5),), {"dim_order": [0, 2, 3, 1]})
    ],
}


def own_samples(name: str, dtype: torch.dtype) -> List[Sample]:
    """Hand-written samples for `name`; else a Tensor-and-Scalar sample for
    an overload named `*Scalar*` taking (Tensor, Scalar), or a tensor sample
    for an operator whose only required argument is one Tensor."""

    def make(*shape, **kwargs):
        return make_tensor(shape, dtype=dtype, device="cpu", **kwargs)

    builder = OWN_SAMPLES.get(name)
    if builder is not None:
        return builder(make, dtype)
    op = resolve(name)
    arguments = op._schema.arguments if op is not None else []
    takes = [str(a.type) for a in arguments]
    if "Scalar" in name.split(".", 1)[1] and takes[:2] == ["Tensor", "number"]:
        scalar = _scalar_for(dtype)
        return [Sample((make(3, 4), scalar)), Sample((make(), scalar))]
    required = [a for a in arguments if not a.has_default_value() and not a.kwarg_only]
    if takes[:1] == ["Tensor"] and len(required) == 1:
        return [Sample((make(3, 4),)), Sample((make(),))]
    return []
