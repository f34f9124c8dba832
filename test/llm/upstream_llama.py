"""Run with upstream ExecuTorch's Python: builds a tiny random Llama with
upstream's own model code, exports it with upstream's export_llama (KV cache;
dynamic or static prompt length) and writes the eager model's greedy tokens
for a prompt, so that our runtime and runner can be checked on upstream's LLM
programs.

usage: python upstream_llama.py OUT_DIR VOCAB MAX_SEQ_LEN PROMPT_IDS NEW_TOKENS
                                [--static] [--xnnpack]
"""

import json
import os
import subprocess
import sys

import torch

from executorch.examples.models.llama.llama_transformer import construct_transformer
from executorch.examples.models.llama.model_args import ModelArgs


def main():
    out_dir, vocab, max_seq_len, prompt, new_tokens = sys.argv[1:6]
    flags = sys.argv[6:]
    vocab, max_seq_len, new_tokens = int(vocab), int(max_seq_len), int(new_tokens)
    prompt = [int(t) for t in prompt.split(",")]
    params = dict(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=vocab,
                  multiple_of=32, norm_eps=1e-5)
    torch.manual_seed(0)
    args = ModelArgs(**params, max_seq_len=max_seq_len, max_context_len=max_seq_len)
    model = construct_transformer(args).eval()
    with torch.no_grad():
        for p in model.parameters():  # scale so that logits are well separated
            p.copy_(torch.randn_like(p) * 0.2)
    ckpt = os.path.join(out_dir, "ckpt.pth")
    torch.save(model.state_dict(), ckpt)
    with open(os.path.join(out_dir, "params.json"), "w") as f:
        json.dump(params, f)

    tokens = list(prompt)
    with torch.no_grad():
        for _ in range(new_tokens):
            logits = model(torch.tensor([tokens]))
            tokens.append(int(logits[0].argmax()))
    with open(os.path.join(out_dir, "expected.json"), "w") as f:
        json.dump(tokens, f)

    command = [
        sys.executable, "-m", "executorch.examples.models.llama.export_llama",
        "--model", "llama3", "-p", os.path.join(out_dir, "params.json"),
        "-c", ckpt, "-kv", "--max_seq_length", str(max_seq_len),
        "--max_context_length", str(max_seq_len), "-d", "fp32",
        "--output_name", os.path.join(out_dir, "model.pte"),
        "--metadata", json.dumps({"get_bos_id": 1, "get_eos_ids": [2]}),
    ]
    if "--static" in flags:
        command.append("--disable_dynamic_shape")
    if "--xnnpack" in flags:
        command.append("-X")
    subprocess.run(command, check=True, cwd=out_dir, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
