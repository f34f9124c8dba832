"""The bare-metal Cortex-M firmware (examples/arm) under QEMU: an MLP, a
small CNN and the MLP quantized to int8 (PT2E, XNNPACKQuantizer), exported
with our exporter and built into one image per board with only the kernels
they use, print outputs that match PyTorch eager on the same inputs; bad
programs and a too-small arena are reported, never a fault; the image has no
heap.

Tolerances: fp32 |device - eager| <= 1e-5 + 1e-4 * |eager| (the portable
kernels accumulate in a different order than ATen); int8 against the
converted (reference-quantized) model in eager, one step of the output's
quantization scale (a rounding tie may land on the neighbouring step).

One firmware build per board (the runtime core and the portable kernels
compiled for Cortex-M with only the dtypes the models use); later runs only
relink the runner. The build directories live under the CMake build
directory (build/arm-firmware/<board>) and are reused by the next run.
"""

import os
import re
import shutil
import subprocess

import pytest
import torch

from executorch.examples.models import get_model
from executorch.exir import to_edge
from executorch.exir._serialize._program import deserialize_pte_binary
from executorch.exir._serialize._flatbuffer import KernelCallT

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN_SH = os.path.join(REPO_ROOT, "examples", "arm", "run.sh")
# Cortex-M4F and Cortex-M55: each board is one build of the core and kernels.
BOARDS = ["mps2-an386", "mps3-an547"]
MODELS = ["mlp", "cnn", "mlp_int8"]

# Exit codes of the firmware (FirmwareExit in cortex_m/semihosting.h).
EXIT_ERROR = 1
EXIT_FAULT = 3

pytestmark = pytest.mark.skipif(
    shutil.which("arm-none-eabi-g++") is None or shutil.which("qemu-system-arm") is None,
    reason="the arm-none-eabi toolchain or qemu-system-arm is missing "
    "(bash scripts/setup.sh installs gcc-arm-none-eabi and qemu-system-arm)",
)

MODEL_LINE = re.compile(r"^model (\d+): (\S+)$")
OUTPUT_LINE = re.compile(r"^output (\d+): (\w+) \[([\d, ]*)\]((?: \S+)*)$")


def parse_outputs(stdout):
    """{model name: [(dtype, sizes, values)]} from the firmware's output."""
    models, current = {}, None
    for line in stdout.splitlines():
        if match := MODEL_LINE.match(line):
            current = models.setdefault(match.group(2), [])
        elif match := OUTPUT_LINE.match(line):
            assert current is not None, line
            sizes = [int(d) for d in match.group(3).split(",") if d.strip()]
            values = [float(v) for v in match.group(4).split()]
            current.append((match.group(2), sizes, values))
    return models


def quantize_int8(model, inputs):
    """The model through PT2E static int8 quantization (per-channel weights),
    calibrated on `inputs`, and the scale of its quantized output."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )

    quantizer = XNNPACKQuantizer().set_global(
        get_symmetric_quantization_config(is_per_channel=True)
    )
    prepared = prepare_pt2e(torch.export.export(model, inputs).module(), quantizer)
    prepared(*inputs)
    converted = convert_pt2e(prepared)
    output = next(n for n in converted.graph.nodes if n.op == "output").args[0][0]
    assert "dequantize" in str(output.target), output.target
    return converted, float(output.args[1])


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """{name: (.pte path, raw input path, eager outputs, tolerance)} for
    MODELS; "_int8" names the float model quantized."""
    out = tmp_path_factory.mktemp("arm")
    found = {}
    for name in MODELS:
        torch.manual_seed(0)
        model, inputs = get_model(name.removesuffix("_int8"))
        model = model.eval()
        tolerance = {"rtol": 1e-4, "atol": 1e-5}
        if name.endswith("_int8"):
            model, scale = quantize_int8(model, inputs)
            tolerance = {"rtol": 0, "atol": scale * 1.001}
        with torch.no_grad():
            expected = model(*inputs)
        program = to_edge(torch.export.export(model, inputs)).to_executorch()
        pte = out / f"{name}.pte"
        pte.write_bytes(program.buffer)
        raw = out / f"{name}.bin"
        raw.write_bytes(b"".join(t.contiguous().numpy().tobytes() for t in inputs))
        found[name] = (str(pte), str(raw), expected, tolerance)
    return found


@pytest.fixture(scope="module")
def firmware_dir(build_dir):
    return os.path.join(build_dir, "arm-firmware")


def run(firmware_dir, board, models, *flags):
    result = subprocess.run(
        ["bash", RUN_SH, *models, "--board", board,
         "--build-dir", os.path.join(firmware_dir, board), *flags],
        capture_output=True, text=True, timeout=600,
    )
    assert result.returncode in (0, EXIT_ERROR), (
        f"firmware build or run failed ({result.returncode}):\n"
        f"{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    )
    return result


def both_models(programs):
    """run.sh arguments for the MLP and the CNN with their input files."""
    args = [programs[name][0] for name in MODELS]
    for name in MODELS:
        args += ["--inputs", programs[name][1]]
    return args


@pytest.mark.parametrize("board", BOARDS)
def test_outputs_match_eager(programs, firmware_dir, board):
    result = run(firmware_dir, board, both_models(programs))
    assert result.returncode == 0, result.stderr
    printed = parse_outputs(result.stdout)
    assert sorted(printed) == sorted(f"{name}.pte" for name in MODELS)
    for name in MODELS:
        _, _, expected, tolerance = programs[name]
        (dtype, sizes, values), = printed[f"{name}.pte"]
        assert dtype == "Float"
        assert sizes == list(expected.shape)
        torch.testing.assert_close(
            torch.tensor(values).reshape(sizes), expected, **tolerance
        )
    assert re.search(r"^cycles: load \d+ execute [1-9]\d*$", result.stdout, re.M)


def test_planned_memory_larger_than_the_arena_is_reported(programs, firmware_dir):
    result = run(firmware_dir, BOARDS[0], both_models(programs), "--planned-arena", "64")
    assert result.returncode == EXIT_ERROR
    assert "planned arena holds 64 bytes" in result.stderr
    assert "fault" not in result.stderr


def test_missing_kernel_is_reported(programs, firmware_dir):
    # The core-alone image has no kernels at all.
    result = run(firmware_dir, BOARDS[0], both_models(programs), "--core")
    assert result.returncode == EXIT_ERROR
    assert "has no registered kernel" in result.stderr
    assert "OperatorMissing" in result.stderr


@pytest.mark.parametrize("damage", ["truncated", "bad_root_offset"])
def test_corrupted_program_is_reported(programs, firmware_dir, tmp_path, damage):
    data = bytearray(open(programs["mlp"][0], "rb").read())
    if damage == "truncated":
        data = data[: len(data) * 3 // 5]
    else:
        data[0:4] = (0x7FFFFFF0).to_bytes(4, "little")
    damaged = tmp_path / "damaged.pte"
    damaged.write_bytes(data)
    # The kernels are selected from the intact programs (as before: only the
    # runner is rebuilt).
    selection = []
    for name in MODELS:
        selection += ["--ops-from", programs[name][0]]
    result = run(firmware_dir, BOARDS[0], [str(damaged)], *selection)
    assert result.returncode == EXIT_ERROR, result.stdout
    assert "loading the program failed" in result.stderr
    assert "fault" not in result.stderr


def test_image_has_no_heap(programs, firmware_dir):
    """Nothing links newlib's allocator, and any allocator symbol the image
    keeps is a trapping one from libc_overrides.cpp (so a run that called it
    would have exited with kHeapUsed instead of passing)."""
    run(firmware_dir, BOARDS[0], both_models(programs))
    map_text = open(
        os.path.join(firmware_dir, BOARDS[0], "examples", "arm",
                     "arm_executor_runner.elf.map")
    ).read()
    assert "mallocr" not in map_text and "sbrk" not in map_text
    kept = map_text.split("Linker script and memory map", 1)[1]
    allocators = re.findall(
        r"^ \.text\.(malloc|calloc|realloc|_malloc_r|_Znwj|_Znaj|et_pal_allocate)"
        r"\s+0x[0-9a-f]+\s+0x[0-9a-f]+ (\S+)$", kept, re.M)
    for symbol, source in allocators:
        assert source.endswith("libc_overrides.cpp.obj"), (symbol, source)


def kernel_call_index(pte_path, operator):
    """Index, in the forward method's first chain, of the first kernel call
    to `operator` (e.g. "aten::relu")."""
    program = deserialize_pte_binary(open(pte_path, "rb").read()).program
    plan = next(p for p in program.executionPlan if p.name.decode() == "forward")
    for index, instruction in enumerate(plan.chains[0].instructions):
        call = instruction.instrArgs
        if isinstance(call, KernelCallT):
            if plan.operators[call.opIndex].name.decode() == operator:
                return index
    raise AssertionError(f"{pte_path} calls no {operator}")


def test_fault_inside_a_kernel_names_the_instruction(programs, firmware_dir):
    """arm_fault_runner's float relu kernel executes an undefined instruction:
    the HardFault handler prints the faulting PC and the index of the
    instruction Method::execute was running (the MLP's first relu), and the
    firmware exits with kFault."""
    board_dir = os.path.join(firmware_dir, BOARDS[0])
    run(firmware_dir, BOARDS[0], both_models(programs))
    subprocess.run(["cmake", "--build", board_dir, "--target", "arm_fault_runner"],
                   check=True, capture_output=True)
    result = subprocess.run(
        ["qemu-system-arm", "-M", BOARDS[0], "-nographic", "-monitor", "none",
         "-serial", "null", "-semihosting-config", "enable=on,target=native",
         "-kernel", os.path.join(board_dir, "examples", "arm", "arm_fault_runner.elf")],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == EXIT_FAULT, result.stderr
    match = re.search(r"firmware: HardFault at PC 0x[0-9a-f]{8} .*"
                      r" while executing instruction (\d+)$", result.stderr, re.M)
    assert match, result.stderr
    assert int(match.group(1)) == kernel_call_index(programs["mlp"][0], "aten::relu")


@pytest.mark.parametrize(
    "trap, status, message",
    [
        ("heap", 4, "firmware: malloc called, but the firmware must not use the heap"),
        ("new", 4, "firmware: operator new called"),
        ("abort", 2, "trap_test: the check that fails"),
        ("fault", EXIT_FAULT, "firmware: HardFault at PC 0x"),
    ],
)
def test_traps_exit_with_their_code(programs, firmware_dir, trap, status, message):
    """The trapping malloc and operator new, et_pal_abort and the fault
    handler each print why and exit with their own code (FirmwareExit)."""
    board_dir = os.path.join(firmware_dir, BOARDS[0])
    if not os.path.exists(os.path.join(board_dir, "CMakeCache.txt")):
        run(firmware_dir, BOARDS[0], both_models(programs))
    subprocess.run(["cmake", "--build", board_dir, "--target", "arm_trap_test"],
                   check=True, capture_output=True)
    result = subprocess.run(
        ["qemu-system-arm", "-M", BOARDS[0], "-nographic", "-monitor", "none",
         "-serial", "null", "-semihosting-config",
         f"enable=on,target=native,arg=trap_test,arg={trap}",
         "-kernel", os.path.join(board_dir, "examples", "arm", "arm_trap_test.elf")],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == status, result.stderr
    assert message in result.stderr
