"""The developer tools' files on a small model: ETDump, ETRecord and .bpte
written, read back and run; numeric gaps naming a broken operator; and
truncated, corrupted or foreign files rejected with the file and field
named."""

import zipfile

import pytest
import torch

from executorch.devtools import (
    BundledProgram,
    Inspector,
    generate_etrecord,
    parse_etrecord,
)
from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
from executorch.devtools.bundled_program.serialize import (
    BundledProgramError,
    deserialize_from_flatbuffer_to_bundled_program,
    serialize_from_bundled_program_to_flatbuffer,
)
from executorch.devtools.etdump.serialize import (
    ETDumpError,
    deserialize_from_etdump_flatcc,
    read_etdump,
    serialize_to_etdump_flatcc,
)
from executorch.devtools.etrecord import ETRecordError
from executorch.devtools.inspector import compare_results
from executorch.devtools.inspector.numerical_comparator import NumericalComparatorBase
from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
    XnnpackPartitioner,
)
from executorch.exir import (
    ExecutorchBackendConfig,
    to_edge,
    to_edge_transform_and_lower,
)
from executorch.exir.dialects._ops import ops as exir_ops
from executorch.extension.pybindings import portable_lib
from executorch.test.modules import RELU_MLP_RELU_LINE, ReluMlp, relu_becomes_abs


@pytest.fixture(scope="module")
def mlp():
    torch.manual_seed(0)
    model = ReluMlp().eval()
    inputs = (torch.randn(3, 6),)
    return model, inputs, to_edge(torch.export.export(model, inputs))


def run_traced(tmp_path, program, inputs, runs=1, debug_buffer_size=1 << 20):
    """Runs `program` with an ETDump; returns the ETDump and debug buffer
    paths."""
    module = portable_lib._load_for_executorch_from_buffer(
        program.buffer, enable_etdump=True, debug_buffer_size=debug_buffer_size
    )
    assert module.has_etdump()
    for _ in range(runs):
        module.forward(inputs)
    etdump, debug = tmp_path / "run.etdp", tmp_path / "run.bin"
    module.write_etdump_result_to_file(str(etdump), str(debug))
    return str(etdump), str(debug)


def test_numeric_gap_names_the_broken_operator(mlp, tmp_path):
    model, inputs, edge = mlp
    broken = edge.to_executorch(ExecutorchBackendConfig(passes=[relu_becomes_abs]))
    etrecord = tmp_path / "broken.etrecord"
    generate_etrecord(str(etrecord), edge, broken)
    etdump, debug = run_traced(tmp_path, broken, inputs)
    inspector = Inspector(
        etdump_path=etdump, etrecord=str(etrecord), debug_buffer_path=debug
    )
    for distance in ("MSE", "L1", "SNR"):
        gaps = inspector.calculate_numeric_gap(distance)
        worst = [
            (g[0] if distance != "SNR" else -g[0])
            > (1e-3 if distance != "SNR" else -40)
            for g in gaps["gap"]
        ]
        first = worst.index(True)
        # The first operator that departs: the Edge node "relu", which the
        # runtime ran as abs, with the model's source line.
        assert gaps["aot_ops"][first] == ["relu"], distance
        assert gaps["runtime_ops"][first] == ["native_call_abs.out"], distance
        trace = gaps["stacktraces"][first]["relu"]
        assert f"line {RELU_MLP_RELU_LINE}, in forward" in trace
        assert "hidden = torch.relu(self.first(x))" in trace
        # What ran before it matches.
        assert not any(worst[:first]), distance


def test_compare_results_of_two_runs(mlp, capsys):
    model, inputs, edge = mlp
    expected = [model(*inputs)]
    correct = portable_lib._load_for_executorch_from_buffer(
        edge.to_executorch().buffer
    ).forward(inputs)
    broken = portable_lib._load_for_executorch_from_buffer(
        edge.to_executorch(ExecutorchBackendConfig(passes=[relu_becomes_abs])).buffer
    ).forward(inputs)
    same = compare_results(expected, correct)
    assert same["mse"][0] < 1e-12 and same["cosine_similarity"][0] > 0.999999
    assert same["snr"][0] > 100
    differ = compare_results(expected + [3], broken + [3], metrics=["mse", "snr"])
    assert set(differ) == {"mse", "snr"}
    mse = float(torch.mean((expected[0].double() - broken[0].double()) ** 2))
    assert differ["mse"] == [pytest.approx(mse), None] and mse > 1e-4
    assert differ["snr"][0] < same["snr"][0]
    assert "cosine_similarity\n" in capsys.readouterr().out
    with pytest.raises(ValueError, match=r"unknown metrics \['l2'\]"):
        compare_results(expected, correct, metrics=["l2"])
    with pytest.raises(ValueError, match="1 reference outputs but 2 run outputs"):
        compare_results(expected, correct * 2)


def test_custom_comparator(mlp, tmp_path):
    model, inputs, edge = mlp
    program = edge.to_executorch()
    etrecord = tmp_path / "mlp.etrecord"
    generate_etrecord(str(etrecord), edge, program)
    etdump, debug = run_traced(tmp_path, program, inputs, runs=3)

    class MaxAbs(NumericalComparatorBase):
        def element_compare(self, a, b):
            return float((a - b).abs().max())

    inspector = Inspector(
        etdump_path=etdump, etrecord=str(etrecord), debug_buffer_path=debug
    )
    gaps = inspector.calculate_numeric_gap(MaxAbs())
    assert list(gaps["aot_ops"]) == [
        # The weights' transposes are folded into constants at export.
        ["addmm"],
        ["relu"],
        ["addmm_1"],
        ["_softmax"],
    ]
    assert max(g[0] for g in gaps["gap"]) < 1e-5
    with pytest.raises(ValueError, match="unknown distance"):
        inspector.calculate_numeric_gap("cosine")
    # Statistics over the three runs; the method's outputs are kept per block.
    (block,) = [b for b in inspector.event_blocks if b.name == "Execute"]
    softmax = next(e for e in block.events if e.name == "native_call__softmax.out")
    assert len(softmax.perf_data.raw) == 3
    stats = softmax.perf_data
    assert stats.min <= stats.p10 <= stats.p50 <= stats.p90 <= stats.max
    assert stats.min <= stats.avg <= stats.max
    torch.testing.assert_close(block.run_output[0], model(*inputs))


def test_etdump_round_trip_and_bad_files(mlp, tmp_path):
    model, inputs, edge = mlp
    etdump, _ = run_traced(tmp_path, edge.to_executorch(), inputs)
    data = open(etdump, "rb").read()
    dump = read_etdump(etdump)
    assert [r.name for r in dump.run_data] == ["Default", "Execute"]
    assert deserialize_from_etdump_flatcc(serialize_to_etdump_flatcc(dump)) == dump

    truncated = tmp_path / "truncated.etdp"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(
        ETDumpError, match=r"truncated\.etdp: not an ETDump: size prefix"
    ):
        Inspector(etdump_path=str(truncated))

    with pytest.raises(ETDumpError, match="model.pte: not an ETDump: file identifier"):
        deserialize_from_etdump_flatcc(edge.to_executorch().buffer, source="model.pte")

    # An offset inside the file pointing past its end: the field is named.
    corrupted = bytearray(data)
    dump_root = 4 + int.from_bytes(corrupted[4:8], "little")
    vtable = dump_root - int.from_bytes(
        corrupted[dump_root : dump_root + 4], "little", signed=True
    )
    run_data_field = dump_root + int.from_bytes(
        corrupted[vtable + 6 : vtable + 8], "little"
    )
    corrupted[run_data_field : run_data_field + 4] = (len(data) * 4).to_bytes(
        4, "little"
    )
    with pytest.raises(
        ETDumpError, match=r"bad\.etdp: ETDump field run_data: offset .* past the end"
    ):
        deserialize_from_etdump_flatcc(bytes(corrupted), source="bad.etdp")

    # Tensors pointing outside the debug buffer.
    short_buffer = tmp_path / "short.bin"
    short_buffer.write_bytes(b"\0" * 8)
    with pytest.raises(
        ETDumpError, match=r"short\.bin: .*outside the 8-byte debug buffer"
    ):
        Inspector(etdump_path=etdump, debug_buffer_path=str(short_buffer))


def test_etrecord_round_trip_and_bad_files(mlp, tmp_path):
    model, inputs, edge = mlp
    program = edge.to_executorch()
    path = tmp_path / "mlp.etrecord"
    generate_etrecord(
        str(path), edge, program, exported_program=torch.export.export(model, inputs)
    )
    record = parse_etrecord(str(path))
    assert record._debug_handle_map == {
        "forward": {str(k): v for k, v in program.debug_handle_map["forward"].items()}
    }
    handles = {
        n.name: n.meta.get("debug_handle")
        for n in record.edge_dialect_program.graph.nodes
    }
    assert (
        handles["relu"]
        == edge.exported_program()
        .graph.find_nodes(op="call_function", target=exir_ops.edge.aten.relu.default)[0]
        .meta["debug_handle"]
    )
    torch.testing.assert_close(
        record.edge_dialect_program.module()(*inputs), model(*inputs)
    )
    assert record.exported_program is not None

    not_zip = tmp_path / "not_zip.etrecord"
    not_zip.write_bytes(b"hello")
    with pytest.raises(ETRecordError, match=r"not_zip\.etrecord: not an ETRecord"):
        parse_etrecord(str(not_zip))
    truncated = tmp_path / "truncated.etrecord"
    truncated.write_bytes(path.read_bytes()[:-200])
    with pytest.raises(ETRecordError, match=r"truncated\.etrecord: not an ETRecord"):
        parse_etrecord(str(truncated))
    # A zip without the identifier, and one whose program entry is damaged.
    foreign = tmp_path / "foreign.zip"
    with zipfile.ZipFile(foreign, "w") as archive:
        archive.writestr("something", "else")
    with pytest.raises(
        ETRecordError, match=r"foreign\.zip: not an ETRecord \(no ETRECORD_V0"
    ):
        parse_etrecord(str(foreign))
    damaged = tmp_path / "damaged.etrecord"
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(damaged, "w") as target:
        for name in source.namelist():
            data = source.read(name)
            if name == "edge_dialect_exported_program/forward":
                data = data[: len(data) // 2]
            target.writestr(name, data)
    with pytest.raises(
        ETRecordError,
        match=r"damaged\.etrecord: entry 'edge_dialect_exported_program/forward' is not a serialized program",
    ):
        parse_etrecord(str(damaged))


def test_etrecord_generated_while_lowering(mlp, tmp_path):
    """Upstream's flow: `generate_etrecord=True` while lowering, then
    `get_etrecord().save(path)` after `to_executorch()`."""
    model, inputs, _ = mlp
    edge = to_edge_transform_and_lower(
        torch.export.export(model, inputs),
        partitioner=[XnnpackPartitioner()],
        generate_etrecord=True,
    )
    program = edge.to_executorch()
    etrecord = program.get_etrecord()
    path = tmp_path / "lowered.etrecord"
    etrecord.save(str(path))
    record = parse_etrecord(str(path))
    assert record.exported_program is not None
    assert record._delegate_map == {
        "forward": {
            str(k): v for k, v in program.delegate_map["forward"].items()
        }
    }
    torch.testing.assert_close(
        record.edge_dialect_program.module()(*inputs), model(*inputs)
    )
    etdump, _ = run_traced(tmp_path, program, inputs, debug_buffer_size=0)
    # The saved file and the object in memory map events alike.
    for source in (str(path), etrecord):
        inspector = Inspector(etdump_path=etdump, etrecord=source)
        (block,) = [b for b in inspector.event_blocks if b.name == "Execute"]
        (delegate,) = [e for e in block.events if e.name == "DELEGATE_CALL"]
        assert delegate.delegate_backend_name == "XnnpackBackend"
        assert {"aten.addmm.default", "aten._softmax.default"} <= set(
            delegate.op_types
        )
        assert any(
            f"modules.py\", line {RELU_MLP_RELU_LINE}" in trace
            for trace in delegate.stack_traces.values()
        )
    with pytest.raises(RuntimeError, match="generate_etrecord=True"):
        to_edge(torch.export.export(model, inputs)).to_executorch().get_etrecord()


def test_bundled_program_round_trip_runtime_and_bad_files(mlp, tmp_path):
    model, inputs, edge = mlp
    program = edge.to_executorch()
    cases = [MethodTestCase(inputs, model(*inputs))]
    cases.append(MethodTestCase((inputs[0] * 2,), model(inputs[0] * 2)))
    bundled = BundledProgram(program, [MethodTestSuite("forward", cases)])
    data = serialize_from_bundled_program_to_flatbuffer(bundled)
    tables = deserialize_from_flatbuffer_to_bundled_program(data)
    assert tables.program == program.buffer
    (suite,) = tables.method_test_suites
    assert suite.method_name == "forward" and len(suite.test_cases) == 2
    tensor = suite.test_cases[1].inputs[0].val
    assert tensor.sizes == [3, 6] and tensor.dim_order == [0, 1]
    torch.testing.assert_close(
        torch.frombuffer(bytearray(tensor.data), dtype=torch.float32).view(3, 6),
        inputs[0] * 2,
    )

    module = portable_lib._load_bundled_program_from_buffer(data)
    for index in range(2):
        outputs = module.verify_result_with_bundled_expected_output("forward", index)
        torch.testing.assert_close(outputs[0], cases[index].expected_outputs[0])

    wrong = BundledProgram(
        program,
        [MethodTestSuite("forward", [MethodTestCase(inputs, model(*inputs) + 0.5)])],
    )
    module = portable_lib._load_bundled_program_from_buffer(
        serialize_from_bundled_program_to_flatbuffer(wrong)
    )
    with pytest.raises(
        RuntimeError, match=r"12 of 12 elements differ.*worst: output 0 element"
    ):
        module.verify_result_with_bundled_expected_output("forward", 0)

    with pytest.raises(
        ValueError, match="method 'forward' test case 0: the method has 1 inputs"
    ):
        BundledProgram(
            program,
            [MethodTestSuite("forward", [MethodTestCase((inputs[0], inputs[0]))])],
        )
    with pytest.raises(ValueError, match="no such method"):
        BundledProgram(program, [MethodTestSuite("backward", cases)])

    with pytest.raises(
        BundledProgramError, match=r"x\.bpte: not a bundled program: file identifier"
    ):
        deserialize_from_flatbuffer_to_bundled_program(program.buffer, source="x.bpte")
    with pytest.raises(
        BundledProgramError, match=r"x\.bpte: bundled program field .* past the end"
    ):
        deserialize_from_flatbuffer_to_bundled_program(
            data[: len(data) - 900], source="x.bpte"
        )
    with pytest.raises(RuntimeError, match="fails verification"):
        portable_lib._load_bundled_program_from_buffer(data[: len(data) - 900])


def test_runtime_api_profiles_a_program(mlp, tmp_path):
    from executorch.runtime import Runtime

    model, inputs, edge = mlp
    program = Runtime.get().load_program(
        edge.to_executorch().buffer, enable_etdump=True, debug_buffer_size=1 << 16
    )
    method = program.load_method("forward")
    for _ in range(2):
        outputs = method.execute(inputs)
    torch.testing.assert_close(outputs[0], model(*inputs))
    program.write_etdump_result_to_file(
        str(tmp_path / "a.etdp"), str(tmp_path / "a.bin")
    )
    inspector = Inspector(
        etdump_path=str(tmp_path / "a.etdp"), debug_buffer_path=str(tmp_path / "a.bin")
    )
    (block,) = [b for b in inspector.event_blocks if b.name == "Execute"]
    softmax = next(e for e in block.events if e.name == "native_call__softmax.out")
    assert len(softmax.perf_data.raw) == 2
    torch.testing.assert_close(softmax.debug_data[0], model(*inputs))
    # Without enable_etdump there is nothing to write.
    plain = Runtime.get().load_program(edge.to_executorch().buffer)
    with pytest.raises(RuntimeError, match="enable_etdump=True"):
        plain.write_etdump_result_to_file(str(tmp_path / "b.etdp"))
