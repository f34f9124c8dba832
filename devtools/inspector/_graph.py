"""The ETRecord's view of one method: what each debug handle is (operator,
source line, module hierarchy) and how to turn a runtime instruction or
delegate event into debug handles."""

import dataclasses
import operator
from typing import Any, Dict, List, Optional, Sequence, Union

import torch
from torch.export import ExportedProgram

from executorch.devtools.etrecord import ETRecord


@dataclasses.dataclass
class GraphNode:
    name: str
    op_type: str  # e.g. "aten.convolution.default"
    debug_handle: int
    stack_trace: Optional[str]
    module_hierarchy: Optional[Dict[str, Any]]
    node: torch.fx.Node = dataclasses.field(repr=False, default=None)


def _op_type(target) -> str:
    op = getattr(target, "_op", target)
    if isinstance(op, torch._ops.OpOverload):
        return f"{op.namespace}.{op._schema.name.split('::')[1]}.{op._overloadname}"
    return getattr(target, "__name__", str(target))


def _method_entry(maps: Optional[Dict], method: str) -> Dict[str, Any]:
    """One method's map, with string keys (JSON's) whatever it was built
    with."""
    if not maps:
        return {}
    entry = maps.get(method)
    if entry is None and len(maps) == 1:
        entry = next(iter(maps.values()))
    return {str(k): v for k, v in (entry or {}).items()}


class MethodGraph:
    def __init__(self, etrecord: ETRecord, method: str = "forward"):
        programs = etrecord.edge_programs()
        if method not in programs and len(programs) == 1:
            method = next(iter(programs))
        self.method = method
        self.program: Optional[ExportedProgram] = programs.get(method)
        self.handle_map = _method_entry(etrecord._debug_handle_map, method)
        self.delegate_map = _method_entry(etrecord._delegate_map, method)
        self.num_outs = _method_entry(etrecord._instruction_id_to_num_outs_map, method)
        self.by_handle: Dict[int, List[GraphNode]] = {}
        if self.program is not None:
            for node in self.program.graph.nodes:
                if (
                    node.op != "call_function"
                    or node.target is operator.getitem
                    or "debug_handle" not in node.meta
                ):
                    continue
                info = GraphNode(
                    node.name,
                    _op_type(node.target),
                    node.meta["debug_handle"],
                    node.meta.get("stack_trace"),
                    node.meta.get("nn_module_stack"),
                    node,
                )
                self.by_handle.setdefault(info.debug_handle, []).append(info)

    def handles_of_instruction(self, instruction_id: int) -> Optional[List[int]]:
        handles = self.handle_map.get(str(instruction_id))
        if handles is None:
            return None
        return [handles] if isinstance(handles, int) else list(handles)

    def delegate_of_instruction(self, instruction_id: int) -> Optional[Dict]:
        return self.delegate_map.get(str(instruction_id))

    def handles_of_delegate_event(
        self, instruction_id: int, identifier: Union[int, str]
    ) -> Optional[List[int]]:
        delegate = self.delegate_of_instruction(instruction_id)
        if delegate is None:
            return None
        events = {str(k): v for k, v in (delegate.get("delegate_map") or {}).items()}
        handles = events.get(str(identifier))
        if handles is None:
            return None
        return [handles] if isinstance(handles, int) else list(handles)

    def num_outputs(self, instruction_id: int) -> int:
        return int(self.num_outs.get(str(instruction_id), 1))

    def nodes(self, handles: Sequence[int]) -> List[GraphNode]:
        return [n for h in handles for n in self.by_handle.get(h, [])]

    def outputs_of(self, handles: Sequence[int]) -> List[GraphNode]:
        """The nodes among `handles` whose values leave the set (a
        delegate's outputs, in graph order)."""
        inside = {n.node for n in self.nodes(handles)}
        ordered = [n for n in self.program.graph.nodes if n in inside]
        by_node = {n.node: n for n in self.nodes(handles)}
        return [
            by_node[n]
            for n in ordered
            if any(
                user not in inside and user.target is not operator.getitem
                for user in n.users
            )
            or any(
                user.target is operator.getitem
                and any(u not in inside for u in user.users)
                for user in n.users
            )
        ]
