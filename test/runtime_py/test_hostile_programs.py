"""Corrupted and crafted .pte files through the Python entry points
(portable_lib's `_load_for_executorch_from_buffer`, `executorch.runtime`,
and the exir deserializer) raise Python exceptions carrying the runtime's
message; none takes the interpreter down.

The mutants come from test/fuzz/mutate_programs.py's mutators over the seed
corpus, and run in a child interpreter, so that a crash fails the test with
the mutant that caused it instead of killing pytest."""

import json
import pathlib
import re
import struct
import subprocess
import sys

import pytest
import torch

from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
    XnnpackPartitioner,
)
from executorch.exir import to_edge_transform_and_lower
from executorch.exir._serialize._program import (
    deserialize_pte_binary,
    serialize_pte_binary,
)
from executorch.extension.pybindings.portable_lib import (
    _load_for_executorch_from_buffer,
)
from executorch.runtime import Runtime

FUZZ_DIR = pathlib.Path(__file__).resolve().parents[1] / "fuzz"
SEEDS = sorted((FUZZ_DIR / "corpus/program").glob("*.pte"))
MUTANTS_PER_SEED = 25

# Loads each mutant through the three entry points and prints one JSON line
# per call: the exception's type and message, or "ok". "start" lines come
# first so that a crash names its mutant.
CHILD = r"""
import importlib.util, json, random, sys
import torch
from executorch.exir._serialize._program import deserialize_pte_binary
from executorch.extension.pybindings.portable_lib import _load_for_executorch_from_buffer
from executorch.runtime import Runtime

spec = importlib.util.spec_from_file_location("mutate_programs", sys.argv[1])
mutate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mutate)
seeds = [open(p, "rb").read() for p in sys.argv[3:]]
rng = random.Random(0)

def through_module(data):
    module = _load_for_executorch_from_buffer(data)
    meta = module.method_meta("forward")
    inputs = []
    for i in range(meta.num_inputs()):
        info = meta.input_tensor_meta(i)
        if info.nbytes() > 1 << 20:
            return
        inputs.append(torch.ones(list(info.sizes())).to(
            getattr(torch, str(info.dtype()).split(".")[-1].lower(), torch.float)))
    module.run_method("forward", inputs)

def through_runtime(data):
    program = Runtime.get().load_program(data)
    for name in sorted(program.method_names):
        program.load_method(name)

entry_points = {
    "portable_lib": through_module,
    "runtime": through_runtime,
    "exir": deserialize_pte_binary,
}
for s, data in enumerate(seeds):
    for n in range(int(sys.argv[2])):
        strategy = rng.choice(sorted(mutate.MUTATORS))
        mutant = mutate.MUTATORS[strategy](data, rng, seeds)
        for api, call in entry_points.items():
            where = {"seed": sys.argv[3 + s], "mutant": n, "strategy": strategy, "api": api}
            print(json.dumps({"start": where}), flush=True)
            try:
                call(mutant)
                outcome = "ok"
            except Exception as error:
                outcome = [type(error).__name__, str(error)]
            print(json.dumps({**where, "outcome": outcome}), flush=True)
"""


def run_child():
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(FUZZ_DIR / "mutate_programs.py"),
         str(MUTANTS_PER_SEED), *map(str, SEEDS)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = [json.loads(line) for line in result.stdout.splitlines()
             if line.startswith("{")]
    return result, lines


@pytest.fixture(scope="module")
def child_run():
    return run_child()


def test_no_mutant_takes_the_interpreter_down(child_run):
    result, lines = child_run
    last = lines[-1] if lines else None
    assert result.returncode == 0, (
        f"child died ({result.returncode}) at {last}:\n{result.stderr[-2000:]}"
    )
    outcomes = [line for line in lines if "outcome" in line]
    assert len(outcomes) == len(SEEDS) * MUTANTS_PER_SEED * 3


def test_runtime_failures_are_runtime_errors_with_the_runtime_message(child_run):
    _, lines = child_run
    failures = [l for l in lines if "outcome" in l and l["outcome"] != "ok"]
    runtime_failures = [l for l in failures if l["api"] != "exir"]
    assert runtime_failures, "no mutant failed to load: the mutators do nothing"
    for line in runtime_failures:
        kind, message = line["outcome"]
        # Input construction from a corrupt method's metadata may fail on
        # torch's side; everything from the runtime is a RuntimeError with
        # the error's name, code and logged reason.
        if kind == "RuntimeError":
            assert re.search(r"\w+ \(0x[0-9a-f]+\): .+", message), line
        else:
            assert line["api"] == "portable_lib", line
            assert kind in ("ValueError", "TypeError", "IndexError"), line


def test_exir_deserializer_raises_value_error(child_run):
    _, lines = child_run
    for line in lines:
        if line.get("api") == "exir" and line.get("outcome") != "ok":
            if "outcome" in line:
                assert line["outcome"][0] == "ValueError", line


def _edited(pte: bytes, edit) -> bytes:
    """The program after `edit(program)` changed its flatbuffer objects."""
    parsed = deserialize_pte_binary(pte)
    edit(parsed.program)
    return serialize_pte_binary(parsed.program, parsed.constant_data or [b""])


def _with_bad_argument(pte: bytes) -> bytes:
    """The program with its first kernel call's first argument pointing at
    a value index far past the value table."""

    def edit(program):
        plan = program.executionPlan[0]
        call = next(
            i.instrArgs
            for i in plan.chains[0].instructions
            if hasattr(i.instrArgs, "opIndex")
        )
        # The object API hands out a read-only array.
        call.args = [40000, *list(call.args)[1:]]

    return _edited(pte, edit)


def test_crafted_program_error_carries_the_runtime_log():
    bad = _with_bad_argument((FUZZ_DIR / "corpus/program/add.pte").read_bytes())
    with pytest.raises(RuntimeError, match="argument refers to value 40000"):
        _load_for_executorch_from_buffer(bad).run_method("forward", [])
    program = Runtime.get().load_program(bad)
    with pytest.raises(RuntimeError, match=r"InvalidProgram \(0x23\).*value 40000"):
        program.load_method("forward")


def test_truncated_program_error_names_the_problem():
    data = (FUZZ_DIR / "corpus/program/add.pte").read_bytes()
    with pytest.raises(RuntimeError, match="InvalidProgram"):
        Runtime.get().load_program(data[: len(data) // 2])
    with pytest.raises(ValueError, match="Corrupt .pte|exceeds the file size"):
        deserialize_pte_binary(data[: len(data) // 2])


def test_misaligned_8_byte_vector_is_refused_at_load():
    # Found by fuzz_program: non_const_buffer_sizes at a 4-byte offset, which
    # FlatBuffers' verifier lets through and UBSan caught on the read.
    data = (FUZZ_DIR / "regressions/program/crash-misaligned-int64-vector").read_bytes()
    with pytest.raises(
        RuntimeError, match=r"non_const_buffer_sizes is not 8-byte aligned"
    ):
        Runtime.get().load_program(data)


def test_bytes_that_are_not_utf8_reach_python_escaped():
    # Names from a corrupt file used to make the bindings raise
    # UnicodeDecodeError instead of the runtime's error.
    add = (FUZZ_DIR / "corpus/program/add.pte").read_bytes()

    def rename_operator(program):
        program.executionPlan[0].operators[0].name = b"aten::\xffadd"

    bad_operator = _edited(add, rename_operator)
    with pytest.raises(RuntimeError, match=r"OperatorMissing .*aten::\\xffadd"):
        Runtime.get().load_program(bad_operator).load_method("forward")

    def rename_method(program):
        program.executionPlan[0].name = b"for\xe2\x82ward"

    program = Runtime.get().load_program(_edited(add, rename_method))
    assert set(program.method_names) == {"for\\xe2\\x82ward"}


def test_named_data_key_that_is_not_utf8_is_a_value_error():
    pte = (FUZZ_DIR / "corpus/program/xnnpack_linear_relu.pte").read_bytes()
    key = next(iter(deserialize_pte_binary(pte).named_data)).encode()
    # The key is in the named data table and in the delegate's blob.
    bad = pte.replace(key, b"\xff" + key[1:])
    with pytest.raises(ValueError, match=r"named_data\[\d\]: key b'\\xff.*not UTF-8"):
        deserialize_pte_binary(bad)


def test_kernel_argument_of_the_wrong_kind_is_refused_at_load():
    # add.out(Tensor self, Tensor other, *, Scalar alpha, Tensor(a!) out):
    # passing alpha (an int) as `self` is caught against the schema the
    # portable library registered, before any kernel runs.
    add = (FUZZ_DIR / "corpus/program/add.pte").read_bytes()

    def alpha_as_self(program):
        plan = program.executionPlan[0]
        call = next(
            i.instrArgs
            for i in plan.chains[0].instructions
            if hasattr(i.instrArgs, "opIndex")
        )
        args = list(call.args)
        call.args = [args[2], *args[1:]]

    program = Runtime.get().load_program(_edited(add, alpha_as_self))
    with pytest.raises(
        RuntimeError,
        match=r"InvalidProgram.*instruction 0: operator 'aten::add.out' "
        r"argument 0 must be Tensor, the call passes Int",
    ):
        program.load_method("forward")


CONSTANT_OUT = "regressions/program/crash-0c12f75cb76f556807c76a9746c704b832cf97b0"


def test_kernel_writing_a_constant_is_refused_at_load():
    # Found by fuzz_program ("overwrites its const input"): mul.Scalar_out
    # given a constant tensor of the program as `out`. Constants point into
    # the file's bytes, a read-only mapping when loaded from a path.
    data = (FUZZ_DIR / CONSTANT_OUT).read_bytes()
    program = Runtime.get().load_program(data)
    with pytest.raises(
        RuntimeError,
        match=r"InvalidProgram.*instruction 0: operator 'aten::mul.Scalar_out' "
        r"writes its argument 2, value 0, which holds a constant tensor",
    ):
        program.load_method("forward")


def test_kernel_writing_a_value_a_constant_is_moved_into_is_refused_at_load():
    # Found by fuzz_program: a move of constant value 0 into value 4, which
    # mul.Scalar_out writes; the second execution wrote into the constant.
    data = (
        FUZZ_DIR / "regressions/program/crash-e0863882ac7523439c9586ffc6f6bc163bb2c0b1"
    ).read_bytes()
    program = Runtime.get().load_program(data)
    (name,) = program.method_names  # the fuzzer renamed it
    with pytest.raises(
        RuntimeError,
        match=r"InvalidProgram.*instruction 0: operator 'aten::mul.Scalar_out' "
        r"writes its argument 2, value 4, which holds a constant tensor",
    ):
        program.load_method(name)


def _run_from_path_in_child(path: pathlib.Path, inputs: str) -> str:
    """What running forward(inputs) on the program at `path` (a read-only
    mapping) prints in a child interpreter: 'refused: <message>' or the
    outputs. Fails if the child dies."""
    child = (
        "import sys, torch\n"
        "from executorch.extension.pybindings.portable_lib import "
        "_load_for_executorch\n"
        "try:\n"
        f"    print(_load_for_executorch(sys.argv[1]).forward({inputs}))\n"
        "except RuntimeError as e:\n"
        "    print('refused:', e)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", child, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_kernel_writing_a_constant_of_a_mapped_file_does_not_crash():
    # Loaded from a path, the program is mapped read-only: before the load
    # check this run died of SIGSEGV.
    out = _run_from_path_in_child(FUZZ_DIR / CONSTANT_OUT, "[]")
    assert "refused:" in out and "constants are read-only" in out


def _delegate_writing_a_constant() -> bytes:
    """A program whose XNNPACK delegate call has, as its output, the value of
    a constant tensor of the program (a buffer that a portable `where`
    reads), instead of its planned output."""

    class LinearAndWhere(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(4, 4)
            self.register_buffer("c", torch.arange(4.0).reshape(1, 4))

        def forward(self, x):
            return self.linear(x), torch.where(x > 0, self.c, x)

    exported = torch.export.export(LinearAndWhere(), (torch.ones(1, 4),))
    pte = to_edge_transform_and_lower(
        exported, partitioner=[XnnpackPartitioner()]
    ).to_executorch()
    plan = pte.executorch_program.executionPlan[0]
    (delegate_call,) = [
        i.instrArgs
        for i in plan.chains[0].instructions
        if hasattr(i.instrArgs, "delegateIndex")
    ]
    (constant,) = [
        v
        for v, value in enumerate(plan.values)
        if getattr(value.val, "allocationInfo", 1) is None
    ]
    *inputs, output = delegate_call.args
    # The args vector as the flatbuffer stores it: its length, then the
    # value indices, as little-endian int32s.
    before = struct.pack(f"<{len(inputs) + 2}i", len(inputs) + 1, *inputs, output)
    after = struct.pack(f"<{len(inputs) + 2}i", len(inputs) + 1, *inputs, constant)
    assert pte.buffer.count(before) == 1
    return pte.buffer.replace(before, after)


DELEGATE_WRITES_CONSTANT = (
    r"InvalidProgram.*instruction 0: delegate of backend 'XnnpackBackend' "
    r"writes its argument 1, value \d+, which holds a constant tensor"
)


def test_delegate_writing_a_constant_is_refused_at_load():
    program = Runtime.get().load_program(_delegate_writing_a_constant())
    with pytest.raises(RuntimeError, match=DELEGATE_WRITES_CONSTANT):
        program.load_method("forward")


def test_delegate_writing_a_constant_of_a_mapped_file_does_not_crash(tmp_path):
    # Before the load check, XNNPACK wrote the linear's output into the
    # read-only mapping and the interpreter died of SIGSEGV.
    path = tmp_path / "delegate_writes_constant.pte"
    path.write_bytes(_delegate_writing_a_constant())
    out = _run_from_path_in_child(path, "[torch.ones(1, 4)]")
    assert re.search("refused: .*" + DELEGATE_WRITES_CONSTANT, out), out
