"""Hugging Face causal LMs (transformers' Llama, Qwen2, Phi-3, GPT-2 and
the other decoder-only models its static cache supports) to a .pte the LLM
runner runs, from a config or a local checkpoint directory (never the hub).

The model is wrapped in transformers' `TorchExportableModuleWithStaticCache`
(a static KV cache held in buffers, which the program keeps as mutable
state): forward(input_ids [1, n], cache_position [n]) -> logits [1, n,
vocab], the prompt length dynamic up to `max_seq_len`. The program carries
upstream's metadata methods (get_max_seq_len, get_max_context_len,
get_vocab_size, get_bos_id, get_eos_ids, use_kv_cache,
enable_dynamic_shape).

    python -m executorch.extension.llm.export.hf --model_dir DIR \\
        --max_seq_length 128 [-X] --output_name model.pte
"""

import argparse
import os
from typing import Any, Dict, Optional, Union

import torch


def load_causal_lm(source: Union[str, Any]) -> torch.nn.Module:
    """A transformers causal LM in eval mode, fp32: from a local directory
    (config.json and weights) or from a config object (random weights)."""
    from transformers import AutoModelForCausalLM

    if isinstance(source, (str, os.PathLike)):
        if not os.path.isdir(source):
            raise FileNotFoundError(
                f"{source}: not a local model directory (hub downloads are not used)"
            )
        model = AutoModelForCausalLM.from_pretrained(
            source, dtype=torch.float32, local_files_only=True
        )
    else:
        model = AutoModelForCausalLM.from_config(source, dtype=torch.float32)
    return model.eval()


def _merge_aliased_constants(ep) -> None:
    """The static cache's tensors reach the graph twice: as the wrapper's
    buffers and, read through the cache object, as lifted constants of the
    same storage. Uses of such a constant become uses of its buffer (so the
    graph mutates one input, the state), in place."""
    from torch.export.graph_signature import InputKind

    buffers = {}
    for spec in ep.graph_signature.input_specs:
        if spec.kind == InputKind.BUFFER:
            tensor = ep.state_dict.get(spec.target, ep.constants.get(spec.target))
            buffers[tensor.untyped_storage().data_ptr()] = spec.arg.name
    placeholders = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    for spec in list(ep.graph_signature.input_specs):
        if spec.kind != InputKind.CONSTANT_TENSOR:
            continue
        tensor = ep.constants[spec.target]
        buffer = buffers.get(tensor.untyped_storage().data_ptr())
        if buffer is None:
            continue
        node = placeholders[spec.arg.name]
        node.replace_all_uses_with(placeholders[buffer])
        ep.graph.erase_node(node)
        ep.graph_signature.input_specs.remove(spec)
        del ep.constants[spec.target]
    ep.graph_module.recompile()


def _metadata(model, max_seq_len: int, max_context_len: int) -> Dict[str, Any]:
    config = model.config.get_text_config()
    values = {
        "get_max_seq_len": max_seq_len,
        "get_max_context_len": max_context_len,
        "get_vocab_size": config.vocab_size,
        "use_kv_cache": True,
        "use_sdpa_with_kv_cache": False,
        "enable_dynamic_shape": True,
    }
    if config.bos_token_id is not None:
        values["get_bos_id"] = int(config.bos_token_id)
    eos = config.eos_token_id
    if eos is not None:
        values["get_eos_ids"] = [int(e) for e in (eos if isinstance(eos, list) else [eos])]
    return values


def export_causal_lm(
    model: torch.nn.Module,
    max_seq_len: int = 128,
    max_context_len: Optional[int] = None,
    xnnpack: bool = False,
):
    """The ExecutorchProgramManager of `model` (load_causal_lm) with a static
    KV cache of `max_context_len` positions (default: max_seq_len)."""
    from transformers.integrations.executorch import TorchExportableModuleWithStaticCache

    from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower

    context = max_context_len or max_seq_len
    model.generation_config.use_cache = True
    model.generation_config.cache_implementation = "static"
    wrapped = TorchExportableModuleWithStaticCache(model, batch_size=1, max_cache_len=context)
    # Two example tokens so that the export does not specialise the length.
    example = {
        "input_ids": torch.zeros(1, 2, dtype=torch.long),
        "cache_position": torch.arange(2, dtype=torch.long),
    }
    seq = torch.export.Dim("seq", min=1, max=max_seq_len)
    shapes = {"input_ids": {1: seq}, "cache_position": {0: seq}}
    with torch.no_grad():
        exported = torch.export.export(
            wrapped, (), example, dynamic_shapes=shapes, strict=False
        )
    _merge_aliased_constants(exported)
    partitioners = []
    if xnnpack:
        from executorch.examples.models.llama.export_llama_lib import linear_partitioner

        partitioners = [linear_partitioner()]
    edge = to_edge_transform_and_lower(
        exported,
        partitioner=partitioners,
        compile_config=EdgeCompileConfig(_check_ir_validity=False),
        constant_methods=_metadata(model, max_seq_len, context),
    )
    return edge.to_executorch()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model_dir", required=True, help="local transformers model directory")
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--max_context_length", type=int, default=None)
    parser.add_argument("-X", "--xnnpack", action="store_true", help="linears on XNNPACK")
    parser.add_argument("-n", "--output_name", default="model.pte")
    args = parser.parse_args(argv)
    program = export_causal_lm(
        load_causal_lm(args.model_dir),
        args.max_seq_length,
        args.max_context_length,
        args.xnnpack,
    )
    program.save(args.output_name)
    print(args.output_name)


if __name__ == "__main__":
    main()
