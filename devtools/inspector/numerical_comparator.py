"""Distances between an eager (ahead-of-time) value and the runtime's value
of the same graph node, for Inspector.calculate_numeric_gap.

A comparator's `compare(mapping, ...)` turns {(aot handles, aot value):
(runtime handles, runtime value)} into a DataFrame with one row per pair;
`element_compare(a, b)` is the distance of two tensors. Subclass
NumericalComparatorBase (override `preprocessing` to, e.g., dequantize
first) for another distance.

`compare_results(reference, run)` compares two lists of program outputs
(e.g. a bundled program's expected outputs and a run's) with upstream's
metrics.
"""

from abc import ABC, abstractmethod
from typing import Any, Dict, List, Optional, Sequence, Tuple

import pandas as pd
import torch

DebugHandle = Tuple[int, ...]
IntermediateOutputMapping = Dict[Tuple[DebugHandle, Any], Tuple[DebugHandle, Any]]


def _as_float(value: Any) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value.detach().to(torch.float64)
    return torch.tensor(value, dtype=torch.float64)


class NumericalComparatorBase(ABC):
    def __init__(self, inspector=None) -> None:
        self.inspector = inspector

    def preprocessing(
        self, mapping: IntermediateOutputMapping
    ) -> IntermediateOutputMapping:
        """Transforms the pairs before they are compared (none by
        default)."""
        return mapping

    @abstractmethod
    def element_compare(self, a: Any, b: Any) -> float:
        """The distance between value `a` (eager) and `b` (runtime)."""

    def _gap(self, aot: Any, runtime: Any) -> List[float]:
        """One distance per output (a node may have several)."""
        if isinstance(aot, (list, tuple)):
            runtime = runtime if isinstance(runtime, (list, tuple)) else [runtime]
            return [self.element_compare(a, r) for a, r in zip(aot, runtime)]
        if isinstance(runtime, (list, tuple)):
            runtime = runtime[-1]
        return [self.element_compare(aot, runtime)]

    def compare(
        self,
        mapping: IntermediateOutputMapping,
        aot_debug_handle_to_op_names: Dict[DebugHandle, List[str]],
        runtime_debug_handle_to_op_names: Dict[DebugHandle, List[str]],
    ) -> pd.DataFrame:
        rows = []
        for (aot_handle, aot_value), (
            runtime_handle,
            runtime_value,
        ) in self.preprocessing(mapping).items():
            if aot_value is None or runtime_value is None:
                continue
            rows.append(
                {
                    "aot_debug_handle": aot_handle,
                    "aot_ops": aot_debug_handle_to_op_names.get(aot_handle, []),
                    "aot_intermediate_output": aot_value,
                    "runtime_ops": runtime_debug_handle_to_op_names.get(
                        runtime_handle, []
                    ),
                    "runtime_debug_handle": runtime_handle,
                    "runtime_intermediate_output": runtime_value,
                    "gap": self._gap(aot_value, runtime_value),
                }
            )
        return pd.DataFrame(rows)


class MSEComparator(NumericalComparatorBase):
    """Mean squared difference."""

    def element_compare(self, a: Any, b: Any) -> float:
        a, b = _as_float(a), _as_float(b)
        if a.shape != b.shape:
            raise ValueError(f"shapes differ: {list(a.shape)} vs {list(b.shape)}")
        return float(torch.mean((a - b) ** 2)) if a.numel() else 0.0


class L1Comparator(NumericalComparatorBase):
    """Sum of absolute differences."""

    def element_compare(self, a: Any, b: Any) -> float:
        a, b = _as_float(a), _as_float(b)
        if a.shape != b.shape:
            raise ValueError(f"shapes differ: {list(a.shape)} vs {list(b.shape)}")
        return float(torch.sum(torch.abs(a - b)))


class SNRComparator(NumericalComparatorBase):
    """Signal-to-noise ratio in dB: 10 log10(power(a) / power(a - b));
    infinite when the values are equal."""

    def element_compare(self, a: Any, b: Any) -> float:
        a, b = _as_float(a), _as_float(b)
        if a.shape != b.shape:
            raise ValueError(f"shapes differ: {list(a.shape)} vs {list(b.shape)}")
        noise = float(torch.mean((a - b) ** 2)) if a.numel() else 0.0
        signal = float(torch.mean(a**2)) if a.numel() else 0.0
        if noise == 0.0:
            return float("inf")
        if signal == 0.0:
            return float("-inf")
        return 10.0 * float(torch.log10(torch.tensor(signal / noise)))


COMPARATORS = {"MSE": MSEComparator, "L1": L1Comparator, "SNR": SNRComparator}


def _cosine_similarity(a: Any, b: Any) -> float:
    a, b = _as_float(a).flatten(), _as_float(b).flatten()
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {list(a.shape)} vs {list(b.shape)}")
    norms = float(torch.linalg.vector_norm(a) * torch.linalg.vector_norm(b))
    if norms == 0.0:
        return 1.0 if torch.equal(a, b) else 0.0
    return float(torch.dot(a, b)) / norms


_OUTPUT_METRICS = {
    "snr": SNRComparator().element_compare,
    "mse": MSEComparator().element_compare,
    "cosine_similarity": _cosine_similarity,
}


def compare_results(
    reference_output: Sequence[Any],
    run_output: Sequence[Any],
    metrics: Optional[List[str]] = None,
    plot: bool = False,
) -> Dict[str, List[Optional[float]]]:
    """Metric name -> one value per output pair of `reference_output` and
    `run_output` (None where the pair is not two tensors). `metrics` picks
    among "snr", "mse" and "cosine_similarity" (all by default). Prints a
    table per metric, like upstream; `plot=True` (a matplotlib chart
    upstream) is not supported."""
    if plot:
        raise ValueError(
            "compare_results(plot=True) needs matplotlib, which this SDK does "
            "not install; use the returned values"
        )
    unknown = sorted(set(metrics or []) - set(_OUTPUT_METRICS))
    if unknown:
        raise ValueError(
            f"unknown metrics {unknown}; choose among {sorted(_OUTPUT_METRICS)}"
        )
    if len(reference_output) != len(run_output):
        raise ValueError(
            f"{len(reference_output)} reference outputs but {len(run_output)} "
            "run outputs"
        )
    results = {}
    for name, metric in _OUTPUT_METRICS.items():
        if metrics is not None and name not in metrics:
            continue
        results[name] = [
            (
                metric(reference, value)
                if isinstance(reference, torch.Tensor)
                and isinstance(value, torch.Tensor)
                else None
            )
            for reference, value in zip(reference_output, run_output)
        ]
        print(f"{name}\n{'-' * 20}")
        for index, value in enumerate(results[name]):
            print(f"{index:<5}{value if value is None else f'{value:>8.5f}'}")
        print()
    return results
