"""Fixtures for the runtime tests: each program is exported from the same
model source by our exporter and by upstream ExecuTorch's (in its own
environment), so that the runtime is checked against .pte files from both."""

import pytest

from .programs import export_with_ours, MODELS

EXPORTERS = ["ours", "upstream"]


@pytest.fixture(scope="session")
def pte_cache():
    return {}


@pytest.fixture(params=EXPORTERS)
def export_pte(request, pte_cache):
    """Returns a function: model name -> .pte bytes exported by the
    parametrized exporter (cached for the session)."""
    exporter = request.param

    def export(name):
        key = (exporter, name)
        if key not in pte_cache:
            if exporter == "ours":
                pte_cache[key] = export_with_ours(name)
            else:
                upstream = request.getfixturevalue("export_with_upstream")
                pte_cache[key] = upstream(MODELS[name])
        return pte_cache[key]

    return export
