"""Writes a selected-operators YAML (upstream ExecuTorch's format) for a
selective build, from any mix of:

  --root_ops "aten::add.out,mm.out"      an explicit operator list
  --ops_schema_yaml_path ops.yaml        a selected-operators YAML to merge
  --model_file_path model.pte            the operators a program calls, with
                                         the dtypes of their tensors
  --include_all_operators                select everything

    python codegen/tools/gen_oplist.py --model_file_path model.pte \\
        --output_path selected_operators.yaml

Needs PyYAML and flatbuffers, never torch.
"""

import argparse
import os
import sys
from typing import List, Optional

try:
    from .. import selective
    from . import pte_operators
except ImportError:  # run as a script
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import pte_operators

    import selective


def selection_from_model(path: str) -> "selective.OperatorSelection":
    """Selects every operator `path` calls, for the dtypes its calls pass."""
    found = pte_operators.read_operators_file(path)
    selection = selective.OperatorSelection()
    for op, signatures in found.calls.items():
        dtypes = set()
        for signature in signatures:
            dtypes |= {selective.SCALAR_TYPE_NAMES.get(d, str(d)) for d, _ in signature}
        # A call without tensor arguments gives no dtype to restrict to.
        selection.add(op, dtypes if all(signatures) else None, path)
        selection.kernel_metadata[op] = [
            selective.kernel_metadata_entry(s) for s in signatures
        ]
    return selection


def gen_oplist(
    output_path: str,
    model_file_paths: Optional[List[str]] = None,
    ops_schema_yaml_paths: Optional[List[str]] = None,
    root_ops: Optional[str] = None,
    include_all_operators: bool = False,
) -> "selective.OperatorSelection":
    selection = selective.OperatorSelection(include_all_operators=include_all_operators)
    if root_ops:
        selection.merge(selective.from_op_list(root_ops.split(","), "root_ops"))
    for path in ops_schema_yaml_paths or []:
        selection.merge(selective.load_yaml(path))
    for path in model_file_paths or []:
        selection.merge(selection_from_model(path))
    if not (
        selection.include_all_operators or selection.dtypes or selection.all_overloads
    ):
        raise selective.SelectionError(
            "no operators selected: give --root_ops, --ops_schema_yaml_path, "
            "--model_file_path or --include_all_operators"
        )
    text = selective.to_yaml_text(selection)
    directory = os.path.dirname(output_path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    # Rewriting identical output would make the build regenerate its sources.
    if os.path.exists(output_path):
        with open(output_path) as f:
            if f.read() == text:
                return selection
    with open(output_path, "w") as f:
        f.write(text)
    return selection


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output_path", required=True)
    parser.add_argument("--model_file_path", action="append", default=[])
    parser.add_argument("--ops_schema_yaml_path", action="append", default=[])
    parser.add_argument("--root_ops", help="comma-separated operator names")
    parser.add_argument("--include_all_operators", action="store_true")
    args = parser.parse_args(argv)
    try:
        gen_oplist(
            args.output_path,
            args.model_file_path,
            args.ops_schema_yaml_path,
            args.root_ops,
            args.include_all_operators,
        )
    except (selective.SelectionError, pte_operators.PteError, OSError) as e:
        raise SystemExit(f"gen_oplist: {e}")


if __name__ == "__main__":
    main()
