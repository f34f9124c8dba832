"""Exports a model, runs it on the runtime one operator at a time and prints
the first operator whose result departs from eager PyTorch, with the line of
Python that produced it. Exits 1 when one does, 0 when every result matches.

    python -m executorch.devtools.find_divergence --model_name cnn
    python -m executorch.devtools.find_divergence --module my_model.py:make

`--module FILE:FUNCTION` calls FUNCTION() from FILE, which returns
`(module, example_inputs)`.
"""

import argparse
import importlib.util
import sys
from typing import Tuple

import torch

from executorch.devtools.numeric_debugger import find_first_divergence
from executorch.examples.models import MODELS, get_model
from executorch.exir import to_edge


def load_factory(spec: str) -> Tuple[torch.nn.Module, tuple]:
    """Calls the function named by "FILE:FUNCTION" and returns its
    `(module, example_inputs)`."""
    path, sep, function = spec.rpartition(":")
    if not sep or not path or not function:
        raise SystemExit(f"--module wants FILE:FUNCTION, got '{spec}'")
    module_spec = importlib.util.spec_from_file_location("user_model", path)
    if module_spec is None:
        raise SystemExit(f"--module: cannot import '{path}'")
    user_module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(user_module)
    if not hasattr(user_module, function):
        raise SystemExit(f"--module: '{path}' has no function '{function}'")
    model, example_inputs = getattr(user_module, function)()
    return model.eval(), tuple(example_inputs)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("-m", "--model_name", choices=sorted(MODELS))
    source.add_argument("--module", metavar="FILE:FUNCTION")
    parser.add_argument("--atol", type=float, help="override the per-dtype default")
    parser.add_argument("--rtol", type=float, help="override the per-dtype default")
    parser.add_argument(
        "--all",
        action="store_true",
        help="list every kernel call, not just the first divergence",
    )
    parser.add_argument(
        "--same-inputs",
        action="store_true",
        help="judge each kernel call against eager run on the runtime's own "
        "inputs to it, so a difference is reported only where it starts",
    )
    args = parser.parse_args(argv)

    if args.model_name:
        model, example_inputs = get_model(args.model_name)
    else:
        model, example_inputs = load_factory(args.module)
    edge = to_edge(torch.export.export(model, example_inputs))
    report = find_first_divergence(
        edge,
        example_inputs,
        atol=args.atol,
        rtol=args.rtol,
        same_inputs=args.same_inputs,
    )
    if args.all:
        for c in report.comparisons:
            verdict = "ok  " if c.matches else "DIFF"
            print(f"{verdict} {c.instruction:4d} {c.operator} ({c.node}): {c.detail}")
    print(report)
    return 0 if report.first_divergence is None else 1


if __name__ == "__main__":
    sys.exit(main())
