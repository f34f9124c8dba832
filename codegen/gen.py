"""Generates kernel registration code from functions.yaml files.

For every operator entry the output has a boxed wrapper
`void(KernelRuntimeContext&, Span<EValue*>)` that checks the stack, unboxes
each argument in schema order and calls the kernel, plus a table of
`Kernel`s registered by one explicit function (no static initializers, so
nothing is lost when the library is linked statically).

    python -m codegen.gen --functions-yaml kernels/portable/functions.yaml \
        --schemas codegen/aten_schemas.txt --output-dir out \
        --register-function executorch::kernels::register_portable_kernels

Needs only PyYAML.
"""

import argparse
import itertools
import os
import sys
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import yaml

try:
    from . import selective
    from .schema import (
        Argument,
        Schema,
        SchemaError,
        Type,
        load_schema_file,
        parse_schema,
    )
except ImportError:  # run as a script from CMake
    import selective
    from schema import (
        Argument,
        Schema,
        SchemaError,
        Type,
        load_schema_file,
        parse_schema,
    )


@dataclass(frozen=True)
class CppType:
    """How one schema type crosses the boxed boundary: the ArgKind the
    stack is checked against, the kernel's parameter type and the
    expression that unboxes `stack[i]` ("{v}" stands for `*stack[i]`)."""

    kind: str
    param: str
    unbox: str


def _optional(value_type: str, by_ref: bool = False) -> str:
    wrapped = f"std::optional<{value_type}>"
    return f"const {wrapped}&" if by_ref else wrapped


# (base, is_list, optional) -> CppType. Schema types not listed here are
# rejected with the operator named, so the build fails at generation time.
_TYPES: Dict[tuple, CppType] = {
    ("Tensor", False, False): CppType("Tensor", "const Tensor&", "{v}.toTensor()"),
    ("Tensor", False, True): CppType(
        "OptionalTensor",
        _optional("Tensor", by_ref=True),
        "{v}.to<std::optional<Tensor>>()",
    ),
    ("Tensor", True, False): CppType(
        "TensorList", "ArrayRef<Tensor>", "{v}.toTensorList()"
    ),
    ("int", False, False): CppType("Int", "int64_t", "{v}.toInt()"),
    ("int", False, True): CppType(
        "OptionalInt", _optional("int64_t"), "{v}.to<std::optional<int64_t>>()"
    ),
    ("int", True, False): CppType("IntList", "IntArrayRef", "{v}.toIntList()"),
    ("int", True, True): CppType(
        "OptionalIntList",
        _optional("IntArrayRef"),
        "{v}.to<std::optional<IntArrayRef>>()",
    ),
    # Python ints may reach a float argument; unboxing converts them.
    ("float", False, False): CppType(
        "Double", "double", "::executorch::codegen::to_double({v})"
    ),
    ("float", False, True): CppType(
        "OptionalDouble",
        _optional("double"),
        "::executorch::codegen::to_optional_double({v})",
    ),
    ("float", True, False): CppType(
        "DoubleList", "ArrayRef<double>", "{v}.toDoubleList()"
    ),
    ("float", True, True): CppType(
        "OptionalDoubleList",
        _optional("ArrayRef<double>"),
        "{v}.to<std::optional<ArrayRef<double>>>()",
    ),
    ("bool", False, False): CppType("Bool", "bool", "{v}.toBool()"),
    ("bool", False, True): CppType(
        "OptionalBool", _optional("bool"), "{v}.to<std::optional<bool>>()"
    ),
    ("bool", True, False): CppType("BoolList", "ArrayRef<bool>", "{v}.toBoolList()"),
    ("Scalar", False, False): CppType("Scalar", "const Scalar&", "{v}.toScalar()"),
    ("Scalar", False, True): CppType(
        "OptionalScalar",
        _optional("Scalar", by_ref=True),
        "{v}.to<std::optional<Scalar>>()",
    ),
    ("ScalarType", False, False): CppType("Int", "ScalarType", "{v}.to<ScalarType>()"),
    ("ScalarType", False, True): CppType(
        "OptionalInt",
        _optional("ScalarType"),
        "{v}.to<std::optional<ScalarType>>()",
    ),
    ("str", False, False): CppType("String", "std::string_view", "{v}.toString()"),
    ("str", False, True): CppType(
        "OptionalString",
        _optional("std::string_view"),
        "{v}.to<std::optional<std::string_view>>()",
    ),
}
_TYPES[("SymInt", False, False)] = _TYPES[("int", False, False)]
_TYPES[("SymInt", False, True)] = _TYPES[("int", False, True)]
_TYPES[("SymInt", True, False)] = _TYPES[("int", True, False)]
_TYPES[("SymInt", True, True)] = _TYPES[("int", True, True)]
# Enums the runtime has no C++ types for yet: kernels get the raw value, or
# nullopt for None or anything that is not an int.
for _enum in ("MemoryFormat", "Layout", "Device", "Generator"):
    _TYPES[(_enum, False, True)] = CppType(
        "Any", _optional("int64_t"), "::executorch::codegen::to_optional_enum({v})"
    )

_OPTIONAL_TENSOR_LIST = CppType(
    "OptionalTensorList",
    "ArrayRef<std::optional<Tensor>>",
    "{v}.toListOptionalTensor()",
)


class GenError(ValueError):
    pass


def cpp_type(schema: Schema, arg: Argument) -> CppType:
    t: Type = arg.type
    if t.base == "Tensor" and t.is_list and t.elem_optional and not t.optional:
        return _OPTIONAL_TENSOR_LIST
    found = _TYPES.get((t.base, t.is_list, t.optional))
    if found is None:
        raise GenError(
            f"{schema.qualified_name}: argument '{arg.name}' has type "
            f"{t.base}{'[]' if t.is_list else ''}{'?' if t.optional else ''}, "
            "which the code generator does not support"
        )
    if arg.mutable and t.base == "Tensor" and not t.is_list:
        return CppType(found.kind, "Tensor&", found.unbox)
    return found


def return_type(schema: Schema) -> str:
    """The kernel's C++ return type. Out variants return their out tensors."""
    rets = schema.returns
    if not rets:
        return "void"
    names = []
    for ret in rets:
        if ret.type.base != "Tensor" or ret.type.optional:
            raise GenError(
                f"{schema.qualified_name}: only Tensor returns are supported"
            )
        if ret.type.is_list:
            raise GenError(f"{schema.qualified_name}: list returns are not supported")
        names.append("Tensor&" if ret.mutable else "Tensor")
    if len(names) == 1:
        return names[0]
    return "std::tuple<" + ", ".join(names) + ">"


def _native(name: str) -> str:
    """Kernels (and load checks) live in a `native` namespace below the
    YAML's namespace."""
    namespace, _, function = name.rpartition("::")
    return f"{namespace}::native::{function}" if namespace else function


@dataclass(frozen=True)
class KernelEntry:
    schema: Schema
    kernel_name: str  # as in the YAML: "torch::executor::add_out"
    # Position among the operator's kernels; 0 is the first listed.
    index: int = 0
    # KernelKey strings ("v1/6;0,1|...") this kernel is registered under;
    # empty for the fallback kernel (arg_meta: null) that takes any dtype.
    keys: Tuple[str, ...] = ()
    # The entry's `load_check:` ("torch::executor::check_quantize_args"): a
    # FixedArgsCheck (runtime/kernel/operator_schema.h) registered with the
    # operator's schema; empty for none.
    load_check: str = ""

    @property
    def cpp_function(self) -> str:
        """Kernels live in a `native` namespace below the YAML's namespace."""
        return _native(self.kernel_name)

    @property
    def load_check_function(self) -> str:
        return _native(self.load_check) if self.load_check else ""

    @property
    def wrapper_name(self) -> str:
        base = "wrap_" + self.schema.qualified_name.replace("::", "_").replace(".", "_")
        return base if self.index == 0 else f"{base}_{self.index}"


def _dim_orders(value, where: str) -> List[Tuple[int, ...]]:
    """A dim_order_alias value: one dim order ([0, 1]) or several."""
    if isinstance(value, list) and value and all(isinstance(v, list) for v in value):
        return [tuple(int(d) for d in v) for v in value]
    if isinstance(value, list) and all(isinstance(v, int) for v in value):
        return [tuple(value)]
    raise GenError(f"{where}: a dim order alias is a list of ints or of lists")


def _check_arg_meta(schema: Schema, item: dict, arg_meta: dict, where: str) -> None:
    tensors = [a for a in schema.arguments if a.type.base == "Tensor"]
    if any(a.type.is_list for a in tensors):
        raise GenError(f"{where}: arg_meta cannot describe Tensor[] arguments")
    if len(schema.returns) != len(schema.out_arguments):
        raise GenError(f"{where}: arg_meta needs an out variant (a return per out)")
    missing = [
        a.name for a in tensors if a.name not in arg_meta and not a.type.optional
    ]
    unknown = sorted(set(arg_meta) - {a.name for a in tensors})
    if missing or unknown:
        raise GenError(
            f"{where}: arg_meta must name every Tensor argument (missing: "
            f"{missing or 'none'}; not Tensor arguments: {unknown or 'none'})"
        )
    type_alias = item.get("type_alias") or {}
    dim_order_alias = item.get("dim_order_alias") or {}
    for name, meta in arg_meta.items():
        if not (isinstance(meta, list) and len(meta) == 2):
            raise GenError(
                f"{where}: arg_meta of '{name}' is not [type alias, dim order alias]"
            )
        if meta[0] not in type_alias or meta[1] not in dim_order_alias:
            raise GenError(
                f"{where}: arg_meta of '{name}' uses an undefined alias {meta}"
            )
        for dtype in type_alias[meta[0]]:
            if dtype not in selective.SCALAR_TYPE_VALUES:
                raise GenError(
                    f"{where}: type alias {meta[0]} has unknown dtype '{dtype}'"
                )


def kernel_keys(
    schema: Schema, item: dict, arg_meta: dict, where: str
) -> Tuple[str, ...]:
    """Expands `arg_meta` (argument -> [type alias, dim order alias]) with
    the entry's `type_alias` and `dim_order_alias` into KernelKey strings,
    one per combination of alias values. A key lists the tensors a kernel
    call passes, as the runtime does: each Tensor argument in schema order,
    then each returned tensor (the out argument it returns)."""
    _check_arg_meta(schema, item, arg_meta, where)
    type_alias = item["type_alias"]
    dim_order_alias = item["dim_order_alias"]
    described = [a.name for a in schema.arguments if a.name in arg_meta]
    described += [o.name for o in schema.out_arguments if o.name in arg_meta]
    type_names = sorted({arg_meta[a][0] for a in described})
    dim_names = sorted({arg_meta[a][1] for a in described})
    keys = []
    for dtypes in itertools.product(*(type_alias[t] for t in type_names)):
        dtype_of = dict(zip(type_names, dtypes))
        choices = [_dim_orders(dim_order_alias[d], where) for d in dim_names]
        for orders in itertools.product(*choices):
            order_of = dict(zip(dim_names, orders))
            metas = [
                (
                    selective.SCALAR_TYPE_VALUES[dtype_of[arg_meta[a][0]]],
                    order_of[arg_meta[a][1]],
                )
                for a in described
            ]
            keys.append(selective.kernel_metadata_entry(metas))
    return tuple(keys)


def parse_functions_yaml(
    text: str, schemas: Dict[str, Schema], source: str = "functions.yaml"
) -> List[KernelEntry]:
    """Reads `- op:` / `- func:` entries. `op:` entries take their schema
    from `schemas`; `func:` entries carry their own. Each kernel of an entry
    becomes a KernelEntry: `arg_meta: null` is the fallback for any dtype,
    other kernels serve the dtypes and dim orders their arg_meta expands to."""
    entries = []
    for item in yaml.safe_load(text) or []:
        if "func" in item:
            schema = parse_schema(item["func"])
        elif "op" in item:
            op = item["op"]
            qualified = op if "::" in op else f"aten::{op}"
            if qualified not in schemas:
                raise GenError(f"{source}: no schema known for operator '{op}'")
            schema = schemas[qualified]
        else:
            raise GenError(f"{source}: entry without 'op' or 'func': {item}")
        kernels = item.get("kernels") or []
        if not kernels:
            raise GenError(f"{source}: {schema.qualified_name} has no kernels")
        for index, kernel in enumerate(kernels):
            where = f"{source}: {schema.qualified_name} kernel {index}"
            if "kernel_name" not in kernel:
                raise GenError(f"{where}: no kernel_name")
            arg_meta = kernel.get("arg_meta")
            keys = (
                () if arg_meta is None else kernel_keys(schema, item, arg_meta, where)
            )
            entries.append(
                KernelEntry(
                    schema, kernel["kernel_name"], index, keys, item.get("load_check", "")
                )
            )
    return entries


def select_entries(
    entries: Sequence[KernelEntry], root_ops: Optional[Iterable[str]]
) -> List[KernelEntry]:
    """Keeps the entries named in `root_ops` ("aten::add.out" or "add.out");
    all of them when `root_ops` is None. Unknown names are an error."""
    if root_ops is None:
        return list(entries)
    wanted = {op if "::" in op else f"aten::{op}" for op in root_ops}
    known = {e.schema.qualified_name for e in entries}
    missing = sorted(wanted - known)
    if missing:
        raise GenError("selected operators without a kernel: " + ", ".join(missing))
    return [e for e in entries if e.schema.qualified_name in wanted]


def select_by_yaml(
    entries: Sequence[KernelEntry], selection: "selective.OperatorSelection"
) -> List[KernelEntry]:
    """Keeps the entries a selected-operators YAML selects. Selected
    operators without an entry here are left to other kernel libraries
    (prim ops, custom ops), so they are not an error."""
    return [e for e in entries if selection.is_selected(e.schema.qualified_name)]


def gen_selected_dtypes_header(dtypes: Optional[Iterable[str]]) -> str:
    """The header a dtype-selective kernel library is compiled with: the
    dtype-dispatch macros (ET_SWITCH_*) only compile the branches of the
    dtypes dtype_is_selected() accepts; None accepts every dtype."""
    out = [
        "// Generated by codegen/gen.py from a selected-operators YAML. Do not edit.",
        "// The dtypes whose dispatch branches this kernel library compiles.",
        "#pragma once",
        "",
        "#include <executorch/runtime/core/portable_type/scalar_type.h>",
        "",
        "namespace executorch {",
        "namespace codegen {",
        "",
        "constexpr bool dtype_is_selected(::executorch::aten::ScalarType type) {",
    ]
    if dtypes is None:
        out += ["  static_cast<void>(type);", "  return true;"]
    else:
        out += ["  switch (type) {"]
        out += [
            f"    case ::executorch::aten::ScalarType::{t}:" for t in sorted(dtypes)
        ]
        if dtypes:
            out += ["      return true;"]
        out += ["    default:", "      return false;", "  }"]
    out += ["}", "", "} // namespace codegen", "} // namespace executorch", ""]
    return "\n".join(out)


def _declaration(entry: KernelEntry) -> str:
    params = ["KernelRuntimeContext& context"] + [
        f"{cpp_type(entry.schema, a).param} {a.name}" for a in entry.schema.arguments
    ]
    return f"{return_type(entry.schema)} {entry.cpp_function.rpartition('::')[2]}({', '.join(params)});"


def _load_check_declaration(entry: KernelEntry) -> str:
    function = entry.load_check_function.rpartition("::")[2]
    return (
        f"bool {function}(::executorch::runtime::Span<::executorch::runtime::EValue* const> args,"
        " const bool* fixed);"
    )


def gen_declarations(entries: Sequence[KernelEntry]) -> str:
    by_namespace: Dict[str, List[str]] = {}
    for entry in entries:
        namespace = entry.cpp_function.rpartition("::")[0]
        by_namespace.setdefault(namespace, []).append(_declaration(entry))
        if entry.load_check:
            namespace = entry.load_check_function.rpartition("::")[0]
            by_namespace.setdefault(namespace, []).append(_load_check_declaration(entry))
    out = [
        "// Generated by codegen/gen.py. Do not edit.",
        "#pragma once",
        "",
        "#include <optional>",
        "#include <string_view>",
        "#include <tuple>",
        "",
        "#include <executorch/runtime/kernel/kernel_includes.h>",
        "",
    ]
    for namespace in sorted(by_namespace):
        out.append(f"namespace {namespace} {{")
        out.append("using ::executorch::aten::ArrayRef;")
        out.append("using ::executorch::aten::IntArrayRef;")
        out.append("using ::executorch::aten::Scalar;")
        out.append("using ::executorch::aten::ScalarType;")
        out.append("using ::executorch::aten::Tensor;")
        out.append("using ::executorch::runtime::KernelRuntimeContext;")
        out.extend(sorted(set(by_namespace[namespace])))
        out.append(f"}} // namespace {namespace}")
        out.append("")
    return "\n".join(out)


def _kinds_name(entry: KernelEntry) -> str:
    return f"{entry.wrapper_name}_kinds"


def _kinds_array(entry: KernelEntry) -> str:
    """The ArgKind of each schema argument, shared by the wrapper's check and
    the registered schema (a zero-length array is not C++, so none then)."""
    kinds = [cpp_type(entry.schema, a).kind for a in entry.schema.arguments]
    if not kinds:
        return ""
    kind_list = ", ".join(f"ArgKind::{k}" for k in kinds)
    return f"constexpr ArgKind {_kinds_name(entry)}[] = {{{kind_list}}};"


def _kinds_span(entry: KernelEntry) -> str:
    if not entry.schema.arguments:
        return "Span<const ArgKind>()"
    return f"Span<const ArgKind>({_kinds_name(entry)})"


def _written_args_mask(entry: KernelEntry) -> str:
    """OperatorSchema::written_args: a bit per argument the schema marks `!`
    (the first 64)."""
    mask = sum(1 << i for i, a in enumerate(entry.schema.arguments[:64]) if a.mutable)
    return f"uint64_t{{{mask:#x}}}"


def _wrapper(entry: KernelEntry) -> str:
    schema = entry.schema
    call_args = ["context"] + [
        cpp_type(schema, a).unbox.format(v=f"(*stack[{i}])")
        for i, a in enumerate(schema.arguments)
    ]
    lines = [
        f"// {schema.qualified_name}",
        f"void {entry.wrapper_name}(KernelRuntimeContext& context, Span<EValue*> stack) {{",
        f'  if (!check_stack(context, "{schema.qualified_name}", stack, {_kinds_span(entry)})) {{',
        "    return;",
        "  }",
        f"  {entry.cpp_function}(",
        "      " + ",\n      ".join(call_args) + ");",
        "}",
    ]
    return "\n".join(lines)


def gen_registration(
    entries: Sequence[KernelEntry], register_function: str, declarations_header: str
) -> str:
    namespace, _, function = register_function.rpartition("::")
    out = [
        "// Generated by codegen/gen.py. Do not edit.",
        f'#include "{declarations_header}"',
        "",
        "#include <executorch/codegen/unboxing.h>",
        "",
        "namespace {",
        "",
        "using ::executorch::aten::ArrayRef;",
        "using ::executorch::aten::IntArrayRef;",
        "using ::executorch::aten::Scalar;",
        "using ::executorch::aten::ScalarType;",
        "using ::executorch::aten::Tensor;",
        "using ::executorch::codegen::ArgKind;",
        "using ::executorch::codegen::check_stack;",
        "using ::executorch::runtime::EValue;",
        "using ::executorch::runtime::Kernel;",
        "using ::executorch::runtime::KernelRuntimeContext;",
        "using ::executorch::runtime::OperatorSchema;",
        "using ::executorch::runtime::Span;",
        "",
    ]
    for entry in entries:
        kinds = _kinds_array(entry)
        if kinds:
            out.append(kinds)
        out.append(_wrapper(entry))
        out.append("")
    out.append("const OperatorSchema kSchemas[] = {")
    for entry in entries:
        check = f"&{entry.load_check_function}" if entry.load_check else "nullptr"
        out.append(
            f'    {{"{entry.schema.qualified_name}", {_kinds_span(entry)}, {check}, '
            f"{_written_args_mask(entry)}}},"
        )
    if not entries:
        out.append("    {},")
    out += ["};", ""]
    out.append("const Kernel kKernels[] = {")
    count = 0
    for entry in entries:
        name = entry.schema.qualified_name
        for key in entry.keys:
            out.append(f'    Kernel("{name}", "{key}", {entry.wrapper_name}),')
        if not entry.keys:
            out.append(f'    Kernel("{name}", {entry.wrapper_name}),')
        count += max(1, len(entry.keys))
    if not entries:
        out.append("    Kernel(),")
    out += [
        "};",
        "",
        "} // namespace",
        "",
    ]
    if namespace:
        out.append(f"namespace {namespace} {{")
    out += [
        "",
        f"::executorch::runtime::Error {function}() {{",
        "  const ::executorch::runtime::Error schemas ="
        " ::executorch::runtime::register_operator_schemas("
        f"Span<const OperatorSchema>(kSchemas, size_t{{{len(entries)}}}));",
        "  if (schemas != ::executorch::runtime::Error::Ok) {",
        "    return schemas;",
        "  }",
        # size_t: a literal 0 would also convert to a pointer (ambiguous).
        "  return ::executorch::codegen::register_once("
        f"Span<const Kernel>(kKernels, size_t{{{count}}}));",
        "}",
        "",
    ]
    if namespace:
        out.append(f"}} // namespace {namespace}")
    return "\n".join(out) + "\n"


def write_if_changed(path: str, text: str) -> None:
    """Writes `text` to `path` unless it already holds exactly that:
    rewriting identical output would make the build redo what depends on it."""
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == text:
                return
    with open(path, "w") as f:
        f.write(text)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--functions-yaml", action="append", required=True)
    parser.add_argument("--schemas", required=True, help="file of ATen schemas")
    parser.add_argument("--output-dir", required=True)
    parser.add_argument(
        "--register-function", required=True, help="qualified C++ function name"
    )
    parser.add_argument(
        "--root-ops",
        help="comma-separated operators to keep (default: all in the YAML)",
    )
    parser.add_argument(
        "--selected-ops-yaml",
        help="keep only the operators this selected-operators YAML selects",
    )
    parser.add_argument(
        "--dtype-header",
        action="store_true",
        help="also write et_selected_dtypes.h from --selected-ops-yaml",
    )
    args = parser.parse_args(argv)
    if args.dtype_header and not args.selected_ops_yaml:
        parser.error("--dtype-header needs --selected-ops-yaml")
    try:
        schemas = load_schema_file(args.schemas)
        entries: List[KernelEntry] = []
        for path in args.functions_yaml:
            with open(path) as f:
                entries += parse_functions_yaml(f.read(), schemas, source=path)
        root_ops = args.root_ops.split(",") if args.root_ops is not None else None
        entries = select_entries(entries, root_ops)
        selection = None
        if args.selected_ops_yaml:
            selection = selective.load_yaml(args.selected_ops_yaml)
            entries = select_by_yaml(entries, selection)
            elsewhere = sorted(
                set(selection.dtypes) - {e.schema.qualified_name for e in entries}
            )
            if elsewhere:
                # Typically prim ops or custom ops; a typo shows up here too.
                print(
                    f"codegen: {args.register_function}: selected operators "
                    "without a kernel in these YAMLs, left to other libraries: "
                    + ", ".join(elsewhere),
                    file=sys.stderr,
                )
        for entry in entries:
            _declaration(entry)  # reject unsupported types before writing
    except (GenError, SchemaError, selective.SelectionError) as e:
        raise SystemExit(f"codegen: {e}")
    os.makedirs(args.output_dir, exist_ok=True)
    outputs = {
        "NativeFunctions.h": gen_declarations(entries),
        "RegisterKernels.cpp": gen_registration(
            entries, args.register_function, "NativeFunctions.h"
        ),
    }
    if args.dtype_header:
        outputs["et_selected_dtypes.h"] = gen_selected_dtypes_header(
            selection.build_dtypes(e.schema.qualified_name for e in entries)
        )
    for name, text in outputs.items():
        write_if_changed(os.path.join(args.output_dir, name), text)


if __name__ == "__main__":
    main()
