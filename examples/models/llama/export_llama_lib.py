"""export_llama: a Llama-architecture checkpoint (upstream's params.json and
consolidated .pth, or random weights) to a .pte that the LLM runner
(extension/llm/runner, llama_main) runs, with upstream's main flags.

The program has `forward` (tokens [1, n], and input_pos [1] with -kv) and
upstream's metadata methods (get_max_seq_len, get_max_context_len,
get_vocab_size, get_n_layers, use_kv_cache, use_sdpa_with_kv_cache,
enable_dynamic_shape, and whatever --metadata adds, e.g. get_bos_id and
get_eos_ids). The prompt length is dynamic up to --max_seq_length unless
--disable_dynamic_shape.
"""

import argparse
import json
import logging
import os
from typing import Any, Dict, Optional

import torch

from executorch.examples.models.llama.llama_transformer import Transformer
from executorch.examples.models.llama.model_args import ModelArgs

QUANTIZATION_MODES = ("8da4w", "int8")


def build_args_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output-dir", default=".", help="output directory")
    parser.add_argument(
        "--model",
        default="llama3",
        choices=["stories110m", "llama2", "llama3", "llama3_1", "llama3_2"],
        help="the model family (all share this Llama architecture); names the "
        "output when --output_name is not given",
    )
    parser.add_argument("-p", "--params", help="params.json with the hyperparameters")
    parser.add_argument(
        "-c",
        "--checkpoint",
        help="the checkpoint .pth (Meta's parameter names); random weights "
        "when not given",
    )
    parser.add_argument(
        "-kv", "--use_kv_cache", action="store_true", help="a static KV cache as state"
    )
    parser.add_argument(
        "--use_sdpa_with_kv_cache",
        action="store_true",
        help="write the cache with llama::update_cache and attend with "
        "llama::custom_sdpa",
    )
    parser.add_argument(
        "--disable_dynamic_shape",
        dest="enable_dynamic_shape",
        action="store_false",
        help="static prompt length (the runner then feeds one token per call)",
    )
    parser.add_argument("-X", "--xnnpack", action="store_true", help="delegate to XNNPACK")
    parser.add_argument(
        "-qmode",
        "--quantization_mode",
        choices=QUANTIZATION_MODES,
        help="8da4w: 8-bit dynamic activations, 4-bit group-wise weights; "
        "int8: 8-bit per-channel weights",
    )
    parser.add_argument(
        "-G", "--group_size", type=int, default=None, help="group size of 8da4w (128)"
    )
    parser.add_argument(
        "-d", "--dtype-override", default="fp32", choices=["fp32", "fp16", "bf16"]
    )
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument(
        "--max_context_length",
        type=int,
        default=None,
        help="positions the KV cache holds (default: --max_seq_length)",
    )
    parser.add_argument(
        "-m",
        "--metadata",
        default=None,
        help='more metadata methods as JSON, e.g. \'{"get_bos_id": 1, "get_eos_ids": [2]}\'',
    )
    parser.add_argument("-n", "--output_name", default=None, help="the .pte file name")
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser


_DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def build_model(args: argparse.Namespace) -> Transformer:
    """The eager model the flags describe, with the checkpoint's weights."""
    state = None
    if args.checkpoint:
        state = torch.load(args.checkpoint, map_location="cpu", mmap=True, weights_only=True)
    context = args.max_context_length or args.max_seq_length
    options = dict(
        max_seq_len=args.max_seq_length,
        max_context_len=context,
        use_kv_cache=args.use_kv_cache,
        use_sdpa_with_kv_cache_op=args.use_sdpa_with_kv_cache,
        enable_dynamic_shape=args.enable_dynamic_shape,
    )
    if args.params:
        model_args = ModelArgs.from_params_json(args.params, **options)
    else:
        model_args = ModelArgs(dim=288, n_layers=6, n_heads=6, vocab_size=32000, **options)
    if model_args.vocab_size <= 0 and state is not None:
        model_args.vocab_size = state["tok_embeddings.weight"].shape[0]
    model = Transformer(model_args).eval()
    if state is not None:
        missing, unexpected = model.load_state_dict(state, strict=False)
        # The caches and rope tables are not in checkpoints.
        missing = [k for k in missing if "cache" not in k]
        if missing or unexpected:
            raise ValueError(
                f"checkpoint {args.checkpoint} does not fit params "
                f"{args.params}: missing {missing[:5]}, unexpected {unexpected[:5]}"
            )
    return model.to(_DTYPES[args.dtype_override])


def quantize(model: torch.nn.Module, mode: Optional[str], group_size: Optional[int]):
    """Quantizes the linears in place with torchao (upstream's schemes)."""
    if mode is None:
        return model
    from torchao.quantization import (
        Int8DynamicActivationIntxWeightConfig,
        IntxWeightOnlyConfig,
        quantize_,
    )
    from torchao.quantization.granularity import PerAxis, PerGroup

    if mode == "8da4w":
        config = Int8DynamicActivationIntxWeightConfig(
            weight_dtype=torch.int4, weight_granularity=PerGroup(group_size or 128)
        )
    else:
        config = IntxWeightOnlyConfig(weight_dtype=torch.int8, granularity=PerAxis(0))
    quantize_(model, config, filter_fn=lambda m, fqn: isinstance(m, torch.nn.Linear))
    return model


def metadata(model: Transformer, extra: Optional[str]) -> Dict[str, Any]:
    """Upstream's metadata methods; `extra` (JSON) adds or overrides some."""
    a = model.args
    values = {
        "get_max_seq_len": a.max_seq_len,
        "get_max_context_len": a.max_context_len,
        "get_n_layers": a.n_layers,
        "get_vocab_size": a.vocab_size,
        "use_kv_cache": a.use_kv_cache,
        "use_sdpa_with_kv_cache": a.use_sdpa_with_kv_cache_op,
        "enable_dynamic_shape": a.enable_dynamic_shape,
    }
    if extra:
        values.update(json.loads(extra))
    return values


def linear_partitioner():
    """An XnnpackPartitioner for the linears (nearly all of an LLM's work;
    to_edge makes those on 3-d activations matrix products of a transposed
    weight). Whole-graph partitions would pull the token ids in through the
    sizes of the dynamic views, which the XNNPACK lowering cannot take as
    an input."""
    from executorch.backends.xnnpack.partition import config
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
        XnnpackPartitioner,
    )

    linears = [config.LinearConfig, config.AddmmConfig, config.MMConfig]
    return XnnpackPartitioner(configs=linears + [config.PermuteConfig])


def export_program(model: Transformer, xnnpack: bool = False, extra_metadata=None):
    """The ExecutorchProgramManager of `model`'s forward."""
    from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower
    from executorch.extension.llm.export.export_passes import RemoveRedundantTransposes

    a = model.args
    # Two example tokens so that the export does not specialise the length.
    tokens = torch.zeros(1, 2 if a.enable_dynamic_shape else 1, dtype=torch.long)
    inputs = (tokens,) if not a.use_kv_cache else (tokens, torch.tensor([0]))
    shapes = None
    if a.enable_dynamic_shape:
        seq = torch.export.Dim("seq", min=1, max=a.max_seq_len)
        shapes = ({1: seq},) if not a.use_kv_cache else ({1: seq}, None)
    elif not a.use_kv_cache:
        inputs = (torch.zeros(1, a.max_seq_len, dtype=torch.long),)
    with torch.no_grad():
        exported = torch.export.export(model, inputs, dynamic_shapes=shapes, strict=False)
        if a.use_sdpa_with_kv_cache_op:
            # The custom caches' layout transposes cancel around custom_sdpa.
            graph = RemoveRedundantTransposes()(exported.module()).graph_module
            exported = torch.export.export(graph, inputs, dynamic_shapes=shapes, strict=False)
    partitioners = [linear_partitioner()] if xnnpack else []
    edge = to_edge_transform_and_lower(
        exported,
        partitioner=partitioners,
        compile_config=EdgeCompileConfig(_check_ir_validity=False),
        constant_methods=metadata(model, extra_metadata),
    )
    return edge.to_executorch()


def output_path(args: argparse.Namespace) -> str:
    if args.output_name:
        if args.output_name.endswith(".pte"):
            return args.output_name
        return os.path.join(args.output_dir, args.output_name + ".pte")
    prefix = "xnnpack_" if args.xnnpack else ""
    return os.path.join(args.output_dir, f"{prefix}{args.model}.pte")


def export_llama(args: argparse.Namespace) -> str:
    """Exports what `args` (build_args_parser) describe; returns the path."""
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    model = quantize(build_model(args), args.quantization_mode, args.group_size)
    program = export_program(model, args.xnnpack, args.metadata)
    path = output_path(args)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    program.save(path)
    logging.info("wrote %s", path)
    return path
