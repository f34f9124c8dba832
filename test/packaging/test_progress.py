"""Progress bars: drawn on a terminal, absent from pipes and with --quiet,
naming each pass of an export and counting its constants' bytes; the export
command still writes its program under them."""

import io
import subprocess
import sys

import torch

from executorch.exir import to_edge
from executorch.exir.pass_base import PassResult
from executorch.extension import progress
from executorch.extension.progress import ProgressBar


class Terminal(io.StringIO):
    def isatty(self):
        return True


def run_bar(monkeypatch, stderr, quiet=False):
    monkeypatch.setattr(sys, "stderr", stderr)
    with ProgressBar(3, "work", quiet, delay=0) as bar:
        for label in ("a", "b", "c"):
            bar.begin(label)
            bar.step()
    return bar.shown


def test_bar_is_drawn_on_a_terminal(monkeypatch):
    stderr = Terminal()
    assert run_bar(monkeypatch, stderr)
    assert "work" in stderr.getvalue() and "/3" in stderr.getvalue()


def test_no_bar_in_a_pipe_or_when_quiet(monkeypatch):
    piped, quiet = io.StringIO(), Terminal()
    assert not run_bar(monkeypatch, piped)
    assert not run_bar(monkeypatch, quiet, quiet=True)
    assert piped.getvalue() == quiet.getvalue() == ""


def a_user_pass(graph_module):
    return PassResult(graph_module, False)


def test_export_names_each_pass_and_counts_constant_bytes(monkeypatch):
    stderr = Terminal()
    monkeypatch.setattr(sys, "stderr", stderr)
    monkeypatch.setattr(progress, "SHOW_AFTER_SECONDS", 0)
    model = torch.nn.Linear(256, 256)
    exported = torch.export.export(model, (torch.randn(1, 256),))
    to_edge(exported, transform_passes=[a_user_pass]).to_executorch()
    drawn = stderr.getvalue()
    assert "a_user_pass" in drawn
    # Out of the bytes of the weight and the bias: 256 * 257 floats.
    assert "constants of forward" in drawn and "/263k" in drawn


def test_export_command_writes_the_program_without_a_bar_in_a_pipe(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "executorch.examples.portable.scripts.export",
            "-m",
            "mlp",
            "-o",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert (tmp_path / "mlp.pte").read_bytes()[4:8] == b"ET12"
    assert "export mlp" not in result.stderr
