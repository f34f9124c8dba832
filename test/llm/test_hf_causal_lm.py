"""Hugging Face causal LMs (extension/llm/export/hf.py) on our runtime:
small random-initialised Llama, Qwen2, Phi-3 and GPT-2 models exported with
a static KV cache, run by the LLM runner (Python bindings; llama_main for
one), portable and with the linears on XNNPACK. Greedy decoding of 32
tokens must equal transformers' eager `generate` token for token (fp32).

The models' weights are drawn with initializer_range 0.2 so that their
logits are well separated (with the default 0.02 a random model's top two
logits can be closer than float rounding)."""

import os
import subprocess

import pytest
import torch

from . import tokenizer_files as files

transformers = pytest.importorskip("transformers")
runner_lib = pytest.importorskip("executorch.extension.llm.runner")
from executorch.extension.llm.export.hf import export_causal_lm, load_causal_lm  # noqa: E402

NEW_TOKENS = 32
MAX_SEQ_LEN = 64
PROMPT = "Hello, world! 日本語 and more"


def config(family: str, vocab: int):
    # No EOS: generate then never stops early nor suppresses a token.
    common = dict(vocab_size=vocab, initializer_range=0.2, bos_token_id=None, eos_token_id=None)
    attention = dict(
        hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2,
    )
    if family == "llama":
        return transformers.LlamaConfig(**attention, **common)
    if family == "qwen2":
        return transformers.Qwen2Config(**attention, **common)
    if family == "phi3":
        return transformers.Phi3Config(**attention, pad_token_id=0, **common)
    return transformers.GPT2Config(n_embd=64, n_layer=2, n_head=4, **common)


@pytest.fixture(scope="module")
def tokenizer_path(tmp_path_factory):
    return str(files.llama3_style(tmp_path_factory.mktemp("tok") / "tokenizer.json"))


CASES = [
    ("llama", False), ("llama", True),
    ("qwen2", False), ("qwen2", True),
    ("phi3", False),
    ("gpt2", False), ("gpt2", True),
]


@pytest.fixture(scope="module", params=CASES, ids=[f"{f}-{'xnnpack' if x else 'portable'}" for f, x in CASES])
def exported(request, tmp_path_factory, tokenizer_path):
    """(model directory's eager model, .pte path, eager greedy tokens)."""
    family, xnnpack = request.param
    tokenizer = runner_lib.load_tokenizer(tokenizer_path)
    torch.manual_seed(0)
    model = load_causal_lm(config(family, tokenizer.vocab_size))
    # Through a local checkpoint directory, as a user's model comes.
    directory = tmp_path_factory.mktemp(family)
    model.save_pretrained(directory)
    model = load_causal_lm(str(directory))
    prompt = tokenizer.encode(PROMPT)
    with torch.no_grad():
        expected = model.generate(
            torch.tensor([prompt]), max_new_tokens=NEW_TOKENS, do_sample=False
        )[0].tolist()
    path = directory / "model.pte"
    export_causal_lm(model, MAX_SEQ_LEN, xnnpack=xnnpack).save(str(path))
    return str(path), expected, xnnpack


def test_runner_greedy_equals_transformers_generate(exported, tokenizer_path):
    pte, expected, xnnpack = exported
    runner = runner_lib.TextLLMRunner(pte, tokenizer_path)
    assert runner.metadata["use_kv_cache"] is True
    config = runner_lib.GenerationConfig(
        temperature=0, max_new_tokens=NEW_TOKENS, ignore_eos=True, echo=False
    )
    runner.generate(PROMPT, config)
    assert runner.context_tokens == expected
    if xnnpack:
        from executorch.exir._serialize._program import deserialize_pte_binary

        with open(pte, "rb") as f:
            plans = deserialize_pte_binary(f.read()).program.executionPlan
        assert next(p for p in plans if p.name == b"forward").delegates


def test_llama_main_prints_the_greedy_text(exported, tokenizer_path, build_dir):
    pte, expected, xnnpack = exported
    if not xnnpack:
        pytest.skip("llama_main runs the XNNPACK programs (the runner is the same)")
    tokenizer = runner_lib.load_tokenizer(tokenizer_path)
    result = subprocess.run(
        [os.path.join(build_dir, "extension/llm/runner/llama_main"),
         "--model_path", pte, "--tokenizer_path", tokenizer_path, "--prompt", PROMPT,
         "--temperature", "0", "--max_new_tokens", str(NEW_TOKENS), "--ignore_eos"],
        capture_output=True, check=True,
    )
    # The prompt (no BOS) and every generated token, special ones included.
    text = tokenizer.decode_all(expected)
    assert result.stdout.decode("utf-8", "replace").rstrip("\n") == text


def test_missing_directory_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a local model directory"):
        load_causal_lm(str(tmp_path / "nothing"))
