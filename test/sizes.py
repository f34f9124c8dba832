"""Running one loaded program at several input sizes against eager."""

import torch


def compare_at_sizes(module, model, make_inputs, sizes, tol):
    """Runs `module` (a loaded program) and eager `model` on
    `make_inputs(size)` for each of `sizes`, in order, and checks every
    output's shape and values within `tol` (assert_close keywords)."""
    for size in sizes:
        inputs = make_inputs(size)
        with torch.no_grad():
            want = model(*inputs)
        want = want if isinstance(want, tuple) else (want,)
        got = module.forward(inputs)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape, f"size {size}"
            torch.testing.assert_close(g, w, **tol, msg=lambda m: f"size {size}: {m}")
