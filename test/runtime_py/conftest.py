"""Fixtures for the runtime tests: each program is exported from the same
model source by our exporter and by upstream ExecuTorch's (in its own
environment), so that the runtime is checked against .pte files from both."""

import json
import subprocess

import pytest

from .programs import export_with_ours, MODELS

EXPORTERS = ["ours", "upstream"]

# Run by upstream's Python: exports every model of MODELS (passed as JSON on
# stdin) into the directory given as argv[1]. One process for all models, as
# importing torch and executorch dominates the cost of an export.
UPSTREAM_EXPORT = """
import json, sys, textwrap
import torch
from executorch.exir import to_edge

for name, source in json.load(sys.stdin).items():
    namespace = {}
    exec(textwrap.dedent(source), namespace)
    exported = torch.export.export(namespace["model"].eval(), namespace["inputs"])
    to_edge(exported).to_executorch().save(f"{sys.argv[1]}/{name}.pte")
"""


@pytest.fixture(scope="session")
def upstream_ptes(upstream_python, tmp_path_factory):
    """{model name: .pte bytes} exported by upstream ExecuTorch."""
    out = tmp_path_factory.mktemp("upstream_ptes")
    subprocess.run(
        [upstream_python, "-c", UPSTREAM_EXPORT, str(out)],
        input=json.dumps(MODELS),
        text=True,
        check=True,
        cwd="/",
    )
    return {name: (out / f"{name}.pte").read_bytes() for name in MODELS}


@pytest.fixture(scope="session")
def our_ptes():
    """{model name: .pte bytes} exported by our exporter, on first use."""
    return {}


@pytest.fixture(params=EXPORTERS)
def export_pte(request):
    """Returns a function: model name -> .pte bytes exported by the
    parametrized exporter."""
    if request.param == "upstream":
        return request.getfixturevalue("upstream_ptes").__getitem__
    cache = request.getfixturevalue("our_ptes")

    def export(name):
        if name not in cache:
            cache[name] = export_with_ours(name)
        return cache[name]

    return export
