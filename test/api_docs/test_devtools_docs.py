"""Upstream's developer-tools pages: "Delegate debugging"
(debug-backend-delegate.html: `get_delegation_info`, the per-operator
table printed with tabulate, `format_delegated_graph`) and the
"Developer Tools Usage Tutorial" (devtools-integration-tutorial.html:
ETRecord from `generate_etrecord=True`)."""

import torch
from torch.export import export

from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge, to_edge_transform_and_lower


class Mixed(torch.nn.Module):
    """Linear and ReLU go to one XNNPACK delegate and the add to another;
    the cumulative sum between them stays on portable kernels."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        return torch.cumsum(torch.relu(self.fc(x)), dim=1) + 1.0


def _lowered():
    return to_edge_transform_and_lower(
        export(Mixed().eval(), (torch.randn(2, 4),)), partitioner=[XnnpackPartitioner()]
    )


def test_get_delegation_info_summary_and_table():
    """debug-backend-delegate.html, "Get delegation info": the summary and
    `get_operator_delegation_dataframe()` printed with tabulate."""
    from tabulate import tabulate

    from executorch.devtools.backend_debug import get_delegation_info

    edge_manager = _lowered()
    graph_module = edge_manager.exported_program().graph_module
    delegation_info = get_delegation_info(graph_module)
    summary = delegation_info.get_summary()
    assert "Total delegated subgraphs: 2" in summary
    df = delegation_info.get_operator_delegation_dataframe()
    table = tabulate(df, headers="keys", tablefmt="fancy_grid")
    assert "aten_cumsum_default" in table
    by_op = delegation_info.delegation_by_operator
    assert by_op["aten_cumsum_default"].delegated == 0
    assert by_op["aten_cumsum_default"].non_delegated == 1
    assert by_op["aten_relu_default"].delegated == 1
    assert sum(b.delegated for k, b in by_op.items() if k.startswith("aten_add_")) == 1
    assert delegation_info.num_delegated_subgraphs == 2
    total = df[df["op_type"] == "Total"].iloc[0]
    assert total["occurrences_in_delegated_graphs"] == delegation_info.num_delegated_nodes
    assert total["occurrences_in_non_delegated_graphs"] == delegation_info.num_non_delegated_nodes


def test_format_delegated_graph_shows_the_delegate_inside():
    """debug-backend-delegate.html, "Visualize delegated graph"."""
    from executorch.exir.backend.utils import format_delegated_graph

    text = format_delegated_graph(_lowered().exported_program().graph_module)
    assert "lowered_module_0" in text
    assert "relu" in text and "cumsum" in text


def test_generate_etrecord_and_save(tmp_path):
    """devtools-integration-tutorial.html, "Generate ETRecord":
    `to_edge(..., generate_etrecord=True)`, `get_etrecord().save(path)`."""
    from executorch.devtools import parse_etrecord

    edge = to_edge(export(Mixed().eval(), (torch.randn(2, 4),)), generate_etrecord=True)
    et_program_manager = edge.to_executorch()
    etrecord = et_program_manager.get_etrecord()
    etrecord.save(str(tmp_path / "etrecord.bin"))
    parsed = parse_etrecord(str(tmp_path / "etrecord.bin"))
    assert parsed is not None
