"""executorch.extension.pybindings.portable_lib: programs exported by our
exporter and by upstream's run on our runtime and match eager; metadata;
inputs as torch or numpy; outputs that outlive the method; errors that say
what is wrong."""

import gc
import threading

import numpy as np
import pytest
import torch

from executorch.extension.pybindings import portable_lib
from executorch.extension.pybindings.portable_lib import (
    _load_for_executorch,
    _load_for_executorch_from_buffer,
)

from .programs import (
    assert_matches,
    eager,
    export_with_ours,
    model_and_inputs,
    MODELS,
)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_matches_eager(export_pte, name):
    inputs, expected = eager(name)
    module = _load_for_executorch_from_buffer(export_pte(name))
    assert_matches(module.run_method("forward", inputs), expected)
    assert_matches(module.forward(inputs), expected)


def test_load_from_file(export_pte, tmp_path):
    path = tmp_path / "model.pte"
    path.write_bytes(export_pte("mlp"))
    inputs, expected = eager("mlp")
    module = _load_for_executorch(str(path))
    assert module.method_names() == ["forward"]
    assert_matches(module(inputs), expected)


def test_method_meta(export_pte):
    meta = _load_for_executorch_from_buffer(
        export_pte("add_with_parameter")
    ).method_meta("forward")
    assert meta.name() == "forward"
    assert (meta.num_inputs(), meta.num_outputs()) == (2, 1)
    x, y = meta.input_tensor_meta(0), meta.input_tensor_meta(1)
    assert (x.sizes(), y.sizes()) == ((2, 3), (3,))
    assert x.dtype() == 6 and x.dtype_name() == "Float"  # ScalarType.Float
    assert (x.nbytes(), y.nbytes()) == (24, 12)
    assert meta.output_tensor_meta(0).sizes() == (2, 3)
    assert meta.num_memory_planned_buffers() >= 1
    assert meta.memory_planned_buffer_size(meta.num_memory_planned_buffers() - 1) > 0
    assert "num_inputs=2" in repr(meta) and "dtype=Float" in repr(x)
    with pytest.raises(RuntimeError, match="input 5"):
        meta.input_tensor_meta(5)


def test_numpy_inputs(export_pte):
    inputs, expected = eager("integer_and_bool")
    module = _load_for_executorch_from_buffer(export_pte("integer_and_bool"))
    assert_matches(module.forward([t.numpy() for t in inputs]), expected)


def test_numpy_inputs_in_any_layout(export_pte):
    """Read-only, big-endian and strided arrays are all accepted."""
    inputs, expected = eager("add_with_parameter")
    x, y = (t.numpy() for t in inputs)
    read_only = np.frombuffer(x.tobytes(), np.float32).reshape(2, 3)
    big_endian = y.astype(">f4")
    strided = np.ascontiguousarray(x.T).T
    module = _load_for_executorch_from_buffer(export_pte("add_with_parameter"))
    assert_matches(module.forward([read_only, big_endian]), expected)
    assert_matches(module.forward([strided, y]), expected)
    with pytest.raises(TypeError, match="numpy dtype <U1 has no ExecuTorch"):
        module.forward([np.array([["a"] * 3] * 2), y])


def test_outputs_are_copies_that_outlive_the_module(export_pte):
    module = _load_for_executorch_from_buffer(export_pte("add_with_parameter"))
    first = module.forward((torch.ones(2, 3), torch.ones(3)))[0]
    kept = first.clone()
    module.forward((torch.zeros(2, 3), torch.zeros(3)))
    torch.testing.assert_close(first, kept)
    del module
    gc.collect()
    torch.testing.assert_close(first, kept)


@pytest.mark.parametrize(
    "planning",
    [
        dict(alloc_graph_input=False),
        dict(alloc_graph_output=False),
        dict(alloc_graph_input=False, alloc_graph_output=False),
    ],
)
def test_unplanned_inputs_and_outputs(planning):
    """Inputs outside planned memory are borrowed from the caller; outputs
    outside it get buffers from the bindings."""
    module = _load_for_executorch_from_buffer(
        export_with_ours("add_with_parameter", **planning)
    )
    meta = module.method_meta("forward")
    planned_input = meta.input_tensor_meta(0).is_memory_planned()
    assert planned_input == planning.get("alloc_graph_input", True)
    for _ in range(2):
        inputs, expected = eager("add_with_parameter")
        assert_matches(module.forward(inputs), expected)


def test_channels_last_input_and_output(export_pte):
    """The input is laid out in the dim order the method expects, whatever
    the caller's layout; the output keeps the program's dim order."""
    module = _load_for_executorch_from_buffer(export_pte("channels_last"))
    meta = module.method_meta("forward")
    assert meta.input_tensor_meta(0).dim_order() == (0, 2, 3, 1)
    inputs, (expected,) = eager("channels_last")
    for x in (inputs[0], inputs[0].contiguous()):
        (actual,) = module.forward((x,))
        torch.testing.assert_close(actual, expected)
        assert actual.is_contiguous(memory_format=torch.channels_last)


def test_dynamic_shapes():
    """Inputs may take any size up to the exported bound; outputs have the
    sizes of the run."""
    try:
        from executorch.exir import to_edge
    except ImportError as e:
        pytest.skip(f"our exporter does not import yet: {e}")
    n = torch.export.Dim("n", min=1, max=8)
    model = torch.nn.Tanh()
    exported = torch.export.export(
        model, (torch.randn(4, 3),), dynamic_shapes=({0: n},)
    )
    module = _load_for_executorch_from_buffer(to_edge(exported).to_executorch().buffer)
    assert module.method_meta("forward").input_tensor_meta(0).sizes() == (8, 3)
    for rows in (1, 5, 8):
        x = torch.randn(rows, 3)
        torch.testing.assert_close(module.forward((x,))[0], torch.tanh(x))
    with pytest.raises(
        RuntimeError, match="size 9 at dim 0 is above its upper bound 8"
    ):
        module.forward((torch.randn(9, 3),))


def test_one_module_shared_by_threads(export_pte):
    """Calls from several threads are serialized per method: each gets the
    outputs of its own inputs."""
    model, _ = model_and_inputs("mlp")
    module = _load_for_executorch_from_buffer(export_pte("mlp"))
    failures = []

    def worker(seed):
        generator = torch.Generator().manual_seed(seed)
        for _ in range(50):
            x = torch.randn(5, 8, generator=generator)
            with torch.no_grad():
                expected = model(x)
            if not torch.allclose(module.forward((x,))[0], expected, atol=1e-5):
                failures.append(seed)

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_program_bytes_are_copied(export_pte):
    buffer = bytearray(export_pte("add_with_parameter"))
    module = _load_for_executorch_from_buffer(buffer)
    buffer[:] = bytes(len(buffer))
    inputs, expected = eager("add_with_parameter")
    assert_matches(module.forward(inputs), expected)


def test_errors_name_the_input_and_what_was_expected(export_pte):
    module = _load_for_executorch_from_buffer(export_pte("add_with_parameter"))
    x, y = torch.ones(2, 3), torch.ones(3)
    with pytest.raises(ValueError, match="'forward' takes 2 inputs, got 1"):
        module.forward((x,))
    with pytest.raises(RuntimeError) as dtype_error:
        module.forward((x, y.long()))
    for part in ("input 1", "InvalidArgument", "Float", "Long"):
        assert part in str(dtype_error.value)
    with pytest.raises(RuntimeError, match="input 1.*expected size 3, got 4"):
        module.forward((x, torch.ones(4)))
    with pytest.raises(TypeError, match="input 0: expected a tensor.*got Python str"):
        module.forward(("x", y))
    with pytest.raises(RuntimeError, match="No method named 'backward'"):
        module.run_method("backward", (x, y))
    # The module still works after the failures.
    assert module.forward((x, y))[0].shape == (2, 3)


def test_scalar_inputs_are_type_checked(export_pte):
    module = _load_for_executorch_from_buffer(export_pte("scalar_inputs"))
    x = torch.arange(3.0)
    with pytest.raises(TypeError, match="input 1: expected Int, got Python float"):
        module.forward((x, 3.5, 0.5, True))
    with pytest.raises(TypeError, match="input 3: expected Bool, got Python int"):
        module.forward((x, 3, 0.5, 1))
    # An int is a valid float.
    assert module.forward((x, 3, 1, True))[0].shape == (3,)


def test_upstream_program_without_constants(export_with_upstream):
    pte = export_with_upstream("""
        import torch

        class Model(torch.nn.Module):
            def forward(self, x, y):
                return x * y + x

        model = Model()
        inputs = (torch.ones(2, 2), torch.full((2, 2), 2.0))
        """)
    module = _load_for_executorch_from_buffer(pte)
    torch.testing.assert_close(
        module.forward((torch.ones(2, 2), torch.ones(2, 2)))[0], torch.full((2, 2), 2.0)
    )


def test_bad_programs_raise():
    with pytest.raises(ValueError, match="contiguous"):
        _load_for_executorch_from_buffer(memoryview(b"ET12" * 32)[::2])
    with pytest.raises(RuntimeError, match="InvalidProgram.*'ET12'"):
        _load_for_executorch_from_buffer(b"not a program" * 10)
    with pytest.raises(RuntimeError, match="NotFound.*/nonexistent/model.pte"):
        _load_for_executorch("/nonexistent/model.pte")


@pytest.mark.parametrize(
    "dtype", [torch.bfloat16, torch.float8_e4m3fn, torch.float16, torch.bool]
)
def test_tensor_conversion_round_trips(dtype):
    tensor = torch.linspace(-2, 2, 6).reshape(2, 3).to(dtype)
    converted = portable_lib._to_runtime(tensor)
    back = portable_lib._from_runtime(converted)
    assert back.dtype == dtype
    assert torch.equal(back.view(torch.uint8), tensor.view(torch.uint8))


def test_lazy_conjugate_and_grad_tensors_convert():
    z = torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex64)
    assert torch.equal(
        portable_lib._from_runtime(portable_lib._to_runtime(z.conj())), z.conj()
    )
    x = torch.ones(2, requires_grad=True)
    assert torch.equal(portable_lib._from_runtime(portable_lib._to_runtime(x)), x)


def test_operator_names_include_portable_kernels():
    names = portable_lib._get_operator_names()
    assert "aten::add.out" in names and names == sorted(names)
    assert portable_lib._is_available("NoSuchBackend") is False


def _run_after_fork(modules, inputs, results):
    """A forked child's work: set the thread count as a multiprocessing
    worker would, then run each module at 1 and at 2 threads."""
    outputs = []
    for threads in (1, 2):
        portable_lib._unsafe_reset_threadpool(threads)
        outputs.append([m.forward(list(inputs))[0].numpy() for m in modules])
    results.put((portable_lib._threadpool_get_thread_count(), outputs))


def test_a_forked_child_sets_threads_and_runs_loaded_programs():
    """fork() copies the thread pool but not its threads: a child that
    resets the thread count (destroying the parent's pool) or runs a
    program loaded before the fork must neither hang nor go wrong."""
    import multiprocessing

    from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
        XnnpackPartitioner,
    )
    from executorch.exir import to_edge, to_edge_transform_and_lower

    if getattr(portable_lib, "_unsafe_reset_threadpool", None) is None:
        pytest.skip("built without the thread pool")
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 64)
    ).eval()
    inputs = (torch.randn(96, 256),)
    ep = torch.export.export(model, inputs)
    programs = [
        to_edge(ep).to_executorch().buffer,
        to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])
        .to_executorch()
        .buffer,
    ]
    modules = [_load_for_executorch_from_buffer(p) for p in programs]
    portable_lib._unsafe_reset_threadpool(2)
    for m in modules:  # the pool's workers now spin, then sleep
        m.forward(list(inputs))
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    child = context.Process(target=_run_after_fork, args=(modules, inputs, results))
    child.start()
    try:
        threads, outputs = results.get(timeout=120)
    finally:
        child.join(timeout=30)
        if child.is_alive():
            child.kill()
        portable_lib._unsafe_reset_threadpool(0)
    assert child.exitcode == 0
    assert threads == 2
    with torch.no_grad():
        expected = model(*inputs)
    for at_threads in outputs:
        for got in at_threads:
            torch.testing.assert_close(
                torch.from_numpy(got), expected, rtol=1e-5, atol=1e-5
            )
