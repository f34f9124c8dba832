"""The LLM text runner (extension/llm/runner) through its Python bindings
and llama_main: greedy generation equal to eager for programs our exir
exports (no KV cache; dynamic and static prompt length), sampling that a
seed reproduces, the stats, and clear errors for bad inputs."""

import os
import subprocess

import pytest
import torch

from . import tiny_llama
from . import tokenizer_files as files

runner_lib = pytest.importorskip("executorch.extension.llm.runner")
NEW_TOKENS = 32
MAX_SEQ_LEN = 64
PROMPT = "Hello, world! 日本語"


@pytest.fixture(scope="module")
def tokenizer_path(tmp_path_factory):
    return str(files.llama3_style(tmp_path_factory.mktemp("tok") / "tokenizer.json"))


def export_ours(model, path, dynamic):
    from executorch.exir import to_edge

    tokens = torch.zeros(1, MAX_SEQ_LEN if not dynamic else 8, dtype=torch.long)
    shapes = None
    if dynamic:
        shapes = {"tokens": {1: torch.export.Dim("n", min=1, max=MAX_SEQ_LEN)}}
    exported = torch.export.export(model, (tokens,), dynamic_shapes=shapes)
    with open(path, "wb") as f:
        f.write(to_edge(exported).to_executorch().buffer)
    return str(path)


@pytest.fixture(scope="module", params=["dynamic", "static"])
def no_cache_program(request, tmp_path_factory, tokenizer_path):
    vocab = runner_lib.load_tokenizer(tokenizer_path).vocab_size
    model = tiny_llama.make_model(vocab, max_seq_len=MAX_SEQ_LEN)
    path = tmp_path_factory.mktemp("pte") / f"{request.param}.pte"
    export_ours(model, path, request.param == "dynamic")
    return model, str(path)


def test_greedy_matches_eager(no_cache_program, tokenizer_path):
    model, pte = no_cache_program
    runner = runner_lib.TextLLMRunner(pte, tokenizer_path)
    assert runner.metadata["use_kv_cache"] is False
    assert runner.metadata["get_max_seq_len"] == MAX_SEQ_LEN
    tokenizer = runner_lib.load_tokenizer(tokenizer_path)
    prompt_ids = tokenizer.encode(PROMPT, bos=1)
    expected = tiny_llama.greedy(model, prompt_ids, NEW_TOKENS)

    pieces, stats = [], []
    config = runner_lib.GenerationConfig(
        temperature=0, max_new_tokens=NEW_TOKENS, num_bos=1, ignore_eos=True, echo=False
    )
    runner.generate(PROMPT, config, pieces.append, stats.append)
    assert runner.context_tokens == expected
    assert "".join(pieces) == tokenizer.decode_all(expected[len(prompt_ids):])
    (s,) = stats
    assert s.num_prompt_tokens == len(prompt_ids)
    assert s.num_generated_tokens == NEW_TOKENS
    assert s.peak_rss_bytes > 0
    assert s.inference_end_ms >= s.prompt_eval_end_ms >= s.inference_start_ms


def test_llama_main_prints_the_greedy_text(no_cache_program, tokenizer_path, build_dir):
    model, pte = no_cache_program
    binary = os.path.join(build_dir, "extension/llm/runner/llama_main")
    tokenizer = runner_lib.load_tokenizer(tokenizer_path)
    prompt_ids = tokenizer.encode(PROMPT, bos=1)
    expected = tiny_llama.greedy(model, prompt_ids, NEW_TOKENS)
    result = subprocess.run(
        [binary, "--model_path", pte, "--tokenizer_path", tokenizer_path,
         "--prompt", PROMPT, "--temperature", "0", "--num_bos", "1",
         "--max_new_tokens", str(NEW_TOKENS), "--ignore_eos", "--stats_json",
         "--seq_len", str(MAX_SEQ_LEN)],
        capture_output=True, check=True,
    )
    text = tokenizer.decode_all(expected, skip_special_tokens=True)
    assert result.stdout.decode("utf-8", "replace").rstrip("\n") == text
    assert b"decode:" in result.stderr and b"STATS {" in result.stderr


def test_sampling_is_seeded(no_cache_program, tokenizer_path):
    _, pte = no_cache_program
    runner = runner_lib.TextLLMRunner(pte, tokenizer_path)

    def sample(seed, topp=0.9):
        runner.reset()
        config = runner_lib.GenerationConfig(
            temperature=1.5, topp=topp, seed=seed, max_new_tokens=12, ignore_eos=True
        )
        runner.generate("Once", config)
        return runner.context_tokens

    assert sample(7) == sample(7)
    assert len({tuple(sample(s)) for s in range(4)}) > 1
    # A tiny nucleus leaves only the most likely token: greedy.
    greedy = runner_lib.GenerationConfig(temperature=0, max_new_tokens=12, ignore_eos=True)
    runner.reset()
    runner.generate("Once", greedy)
    assert sample(3, topp=1e-6) == runner.context_tokens


def test_context_continues_and_resets(no_cache_program, tokenizer_path):
    model, pte = no_cache_program
    runner = runner_lib.TextLLMRunner(pte, tokenizer_path)
    config = runner_lib.GenerationConfig(temperature=0, max_new_tokens=4, ignore_eos=True)
    runner.prefill("Hello", config)
    runner.generate(" world", config)
    first = runner.context_tokens
    runner.generate(" again", config)
    tokenizer = runner_lib.load_tokenizer(tokenizer_path)
    assert runner.context_tokens[: len(first)] == first
    again = tokenizer.encode(" again")
    assert runner.context_tokens[len(first): len(first) + len(again)] == again
    expected = tiny_llama.greedy(model, first + again, 4)
    assert runner.context_tokens == expected
    runner.reset()
    assert runner.context_tokens == []


def test_errors_say_what_is_wrong(no_cache_program, tokenizer_path, tmp_path):
    _, pte = no_cache_program
    with pytest.raises(RuntimeError, match="tokenizer"):
        runner_lib.TextLLMRunner(pte, str(tmp_path / "missing.json"))
    with pytest.raises(RuntimeError, match="Loading the program"):
        runner_lib.TextLLMRunner(str(tmp_path / "missing.pte"), tokenizer_path)
    runner = runner_lib.TextLLMRunner(pte, tokenizer_path)
    config = runner_lib.GenerationConfig(temperature=0)
    with pytest.raises(RuntimeError, match="positions"):
        runner.generate("word " * 200, config)
    assert runner_lib.GenerationConfig(seq_len=20, max_new_tokens=-1).resolve_max_new_tokens(64, 5) == 15
    assert runner_lib.GenerationConfig(max_new_tokens=100).resolve_max_new_tokens(64, 5) == 59
