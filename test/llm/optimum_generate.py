"""Run by test_optimum_executorch.py in a child process whose PYTHONPATH puts
optimum-executorch's directory (scripts/setup_optimum.sh) before .venv's
packages: builds small random-initialised causal LMs with transformers,
saves each to a local directory, exports it with optimum-executorch's
recipe (custom SDPA and custom KV cache, as its LLM flow does) through this
project's executorch package, and compares optimum's greedy `generate` with
transformers' eager `generate`.

Usage: optimum_generate.py RECIPE FAMILY[,FAMILY...]
Prints one JSON object on its last line: {"missing": [...]} when this
package lacks names optimum-executorch imports from executorch, else
{"results": {family: {"ours": [...], "eager": [...]}}}.
"""

import importlib
import json
import sys
import tempfile

import torch

PROMPT = [3, 5, 9, 17, 33, 60]
NEW_TOKENS = 32

# What optimum-executorch 1.1.0 imports from executorch on the way to an
# XNNPACK or portable export and generate (module, name).
IMPORTED = [
    ("executorch.exir", "EdgeCompileConfig"),
    ("executorch.exir", "ExecutorchBackendConfig"),
    ("executorch.exir", "ExecutorchProgram"),
    ("executorch.exir", "to_edge_transform_and_lower"),
    ("executorch.exir.pass_base", "ExportPass"),
    ("executorch.exir.pass_base", "PassResult"),
    ("executorch.exir.passes", "MemoryPlanningPass"),
    ("executorch.exir.dialects._ops", "ops"),
    ("executorch.devtools.backend_debug", "get_delegation_info"),
    ("executorch.backends.xnnpack.partition.xnnpack_partitioner", "XnnpackPartitioner"),
    ("executorch.extension.llm.custom_ops.custom_ops", "custom_sdpa"),
    ("executorch.extension.llm.export.export_passes", "RemoveRedundantTransposes"),
    ("executorch.examples.models.llama.source_transformation.custom_kv_cache", "CustomKVCache"),
    (
        "executorch.examples.models.llama.source_transformation.custom_kv_cache",
        "CustomRingKVCache",
    ),
    ("executorch.extension.pybindings.portable_lib", "ExecuTorchModule"),
    ("executorch.extension.pybindings.portable_lib", "_load_for_executorch"),
    ("executorch.kernels", "quantized"),
    ("executorch", "version"),
]


def missing_names():
    missing = []
    for module, name in IMPORTED:
        try:
            found = importlib.import_module(module)
            if not hasattr(found, name):
                importlib.import_module(f"{module}.{name}")
        except ImportError:
            missing.append(f"{module}.{name}")
    return missing


def make_model(family: str):
    import transformers

    common = dict(
        vocab_size=128,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        bos_token_id=1,
        eos_token_id=2,
    )
    configs = {
        "llama": lambda: transformers.LlamaConfig(**common),
        "qwen2": lambda: transformers.Qwen2Config(**common),
    }
    config = configs[family]()
    torch.manual_seed(0)
    model_class = getattr(transformers, type(config).__name__.replace("Config", "ForCausalLM"))
    return model_class(config).eval()


def run(recipe: str, family: str):
    from optimum.executorch import ExecuTorchModelForCausalLM

    model = make_model(family)
    with tempfile.TemporaryDirectory() as directory:
        model.save_pretrained(directory)
        exported = ExecuTorchModelForCausalLM.from_pretrained(
            directory,
            recipe=recipe,
            task="text-generation",
            attn_implementation="custom_sdpa",
            use_custom_kv_cache=True,
            max_seq_len=64,
        )
        ours = exported.generate(PROMPT, max_seq_len=len(PROMPT) + NEW_TOKENS)
    # Eager without stopping at EOS, so both give NEW_TOKENS tokens: a
    # random model may well pick EOS, which optimum only checks from the
    # second new token on.
    model.generation_config.eos_token_id = None
    eager = model.generate(
        torch.tensor([PROMPT]), max_new_tokens=NEW_TOKENS, do_sample=False
    )[0, len(PROMPT) :].tolist()
    return {"ours": list(ours)[-NEW_TOKENS:], "eager": eager}


def main():
    recipe, families = sys.argv[1], sys.argv[2].split(",")
    missing = missing_names()
    if missing:
        print(json.dumps({"missing": missing}))
        return
    print(json.dumps({"results": {f: run(recipe, f) for f in families}}))


if __name__ == "__main__":
    main()
