"""The HTML report, rendered by a real browser (Debian's chromium, headless,
which scripts/setup.sh installs): its DOM after the page's scripts ran, and
a screenshot that is not blank."""

import re
import shutil
import struct
import subprocess
import zlib

import pytest
import torch

from executorch.devtools import generate_etrecord
from executorch.devtools.report import main as report_main
from executorch.devtools.report._memory_plan import memory_plan
from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.extension.pybindings import portable_lib
from executorch.test.modules import ReluMlp, relu_becomes_abs

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (scripts/setup.sh installs it)"
)


def chromium(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", *args],
        capture_output=True,
        timeout=120,
    )


def png_pixels(path):
    """The RGB(A) rows of an 8-bit PNG (what chromium writes)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, position = {}, 8
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        chunks.setdefault(kind, b"")
        chunks[kind] += data[position + 8 : position + 8 + length]
        position += 12 + length
    width, height, depth, color = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert depth == 8 and color in (2, 6)
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(chunks[b"IDAT"])
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                best = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + best) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """A report of a program whose relu a broken pass turned into abs."""
    directory = tmp_path_factory.mktemp("report")
    torch.manual_seed(0)
    model = ReluMlp().eval()
    inputs = (torch.randn(3, 6),)
    edge = to_edge(torch.export.export(model, inputs))
    program = edge.to_executorch(ExecutorchBackendConfig(passes=[relu_becomes_abs]))
    paths = {
        name: str(directory / name)
        for name in ("m.pte", "m.etrecord", "m.etdp", "m.bin", "report.html")
    }
    program.save(paths["m.pte"])
    generate_etrecord(paths["m.etrecord"], edge, program)
    module = portable_lib._load_for_executorch(
        paths["m.pte"], enable_etdump=True, debug_buffer_size=1 << 16
    )
    for _ in range(3):
        module.forward(inputs)
    module.write_etdump_result_to_file(paths["m.etdp"], paths["m.bin"])
    report_main(
        [
            "--etdump",
            paths["m.etdp"],
            "--etrecord",
            paths["m.etrecord"],
            "--debug-buffer",
            paths["m.bin"],
            "--pte",
            paths["m.pte"],
            "--title",
            "ReluMlp",
            "-o",
            paths["report.html"],
        ]
    )
    return paths


def test_page_is_self_contained(report):
    page = open(report["report.html"]).read()
    assert "<link" not in page and " src=" not in page
    # The only URL is the SVG namespace constant.
    assert set(re.findall(r"https?://[^\s\"']+", page)) == {
        "http://www.w3.org/2000/svg"
    }


def test_rendered_dom(report):
    # The hash asks for the operator table sorted by event name, ascending.
    result = chromium("--dump-dom", f"file://{report['report.html']}#sort=name&asc")
    assert result.returncode == 0, result.stderr[-2000:]
    dom = result.stdout.decode()
    assert '<h1 id="title">ReluMlp</h1>' in dom

    table = dom[
        dom.index('id="operator-table"') : dom.index(
            "</table>", dom.index('id="operator-table"')
        )
    ]
    names = re.findall(
        r"<tr data-instruction=\"\d+\"><td class=\"num\">\d+</td><td>([^<]+)</td>",
        table,
    )
    assert names == sorted(names)
    # Two addmm, abs, softmax (the weights' transposes are folded at export).
    assert "native_call_abs.out" in names and len(names) == 4
    assert 'data-sorted="asc"' in table
    assert "test/modules.py" in table  # source lines

    # One timeline box per timed event (4 operators and Method::execute).
    assert len(re.findall(r'<rect class="event ', dom)) == 5
    # The memory plan: a box per planned tensor and the peak.
    plan = memory_plan(open(report["m.pte"], "rb").read())
    planned = sum(len(b.tensors) for b in plan.buffers)
    assert planned > 0 and len(re.findall(r'<rect class="tensor"', dom)) == planned
    assert "peak live" in dom
    # Numeric gaps: relu (run as abs) is the first to depart from eager.
    gaps = dom[dom.index('id="gap-table"') :]
    assert (
        "First operator departing from eager (SNR &lt; 40 dB): relu (native_call_abs.out)"
        in dom
    )
    diverged = re.findall(r'<tr class="diverged"><td>([^<]+)</td>', gaps)
    assert diverged[0] == "relu"


def test_screenshot_is_not_blank(report, tmp_path):
    shot = tmp_path / "report.png"
    result = chromium(
        "--hide-scrollbars",
        "--window-size=1200,1600",
        f"--screenshot={shot}",
        f"file://{report['report.html']}",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    width, height, channels, rows = png_pixels(shot)
    assert (width, height) == (1200, 1600)
    colors = set()
    inked = 0
    for row in rows[::8]:
        for x in range(0, width * channels, channels * 8):
            pixel = row[x : x + 3]
            colors.add(pixel)
            inked += pixel != b"\xff\xff\xff"
    # Text, lane colors, the memory plan's boxes: many colors, much ink.
    assert len(colors) > 30
    assert inked > 0.05 * (height // 8) * (width // 8)
