#!/usr/bin/env python3
"""LLM prefill and decode speed and peak memory: a Llama-shaped model with
random weights (~124M parameters by default: dim 768, 12 layers, 12 heads,
4 KV heads, vocab 32000), fp32 and 8da4w (8-bit dynamic activations, 4-bit
weights in groups of 128), in three systems:

- ours: `export_llama -kv --use_sdpa_with_kv_cache -X [-qmode 8da4w -G 128]`
  run by our runtime;
- upstream: upstream ExecuTorch's `export_llama` with the same flags, run by
  upstream's runtime, in the Python that EXECUTORCH_UPSTREAM_PYTHON names;
- eager: the same model in PyTorch with its KV cache (fp32 only).

Each (system, mode) runs in a fresh worker process: it loads the program
(memory-mapped), prefills a `--prompt` token prompt in one call, then
decodes `--decode` tokens one call at a time, `--rounds` times (the KV cache
restarts at position 0 each round); the medians are reported as tokens/s,
with the process's peak RSS (VmHWM, which includes the Python interpreter
and torch, the same for all). Ratios are of the same run: ours / upstream.
ms/token is the decode's time per token. `--clock cpu` counts the worker
process's CPU time (all its threads) instead of wall-clock time, so that
on a shared machine waits for a core do not count (the rates are then
tokens per CPU second). A script, not a test: nothing asserts on
time, and figures taken on a busy machine (the load average is printed)
are not comparable.

    EXECUTORCH_UPSTREAM_PYTHON=/work/main/.venv-upstream/bin/python \\
        .venv/bin/python benchmarks/llm_benchmark.py [--threads 4] \\
        [--modes fp32 8da4w] [--prompt 64] [--decode 64] [--rounds 3] \\
        [--clock wall|cpu]

Decode reads every weight but the embedding table once per token, so
memory bandwidth bounds it. The script prints that bound: the bytes decode
must read per token (fp32 weights; 8da4w's 4-bit values and one fp32 scale
per group) over this machine's read bandwidth at `--threads`, measured as
torch's sum over a tensor of those bytes (best of 10), and each system's
decode time as a multiple of it (wall clock only).

`--quick` checks that everything runs: a tiny model, one short round.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

import torch
from machine_limits import read_seconds

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FULL = dict(dim=768, n_layers=12, n_heads=12, n_kv_heads=4, vocab_size=32000,
            multiple_of=256, norm_eps=1e-5)
TINY = dict(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=512,
            multiple_of=32, norm_eps=1e-5)

# A worker: times prefill and decode of one program (or the eager model) and
# prints one JSON line. argv: kind path prompt decode rounds threads clock.
_WORKER = textwrap.dedent("""
    import json, statistics, sys, time, torch
    kind, path, prompt, decode, rounds, threads, clock = sys.argv[1:8]
    now = time.process_time if clock == "cpu" else time.perf_counter
    prompt, decode, rounds, threads = int(prompt), int(decode), int(rounds), int(threads)
    torch.set_num_threads(threads)
    tokens = torch.randint(1, 500, (1, prompt), generator=torch.Generator().manual_seed(0))
    if kind == "eager":
        from executorch.examples.models.llama import export_llama_lib as lib
        args = lib.build_args_parser().parse_args(json.loads(path))
        model = lib.build_model(args)
        def forward(t, pos):
            with torch.no_grad():
                return model(t, pos)
    else:
        from executorch.extension.pybindings import portable_lib
        # Upstream's runtime registers the LLM and quantized kernels on import.
        for name in ("executorch.extension.llm.custom_ops.custom_ops",
                     "executorch.kernels.quantized"):
            try:
                __import__(name)
            except ImportError:
                pass
        portable_lib._unsafe_reset_threadpool(threads)
        module = portable_lib._load_for_executorch(path)
        forward = lambda t, pos: module.forward([t, pos])[0]
    prefill, steps = [], []
    for _ in range(rounds):
        start = now()
        logits = forward(tokens, torch.tensor([0]))
        prefill.append(now() - start)
        token = torch.tensor([[int(logits.reshape(-1, logits.shape[-1])[-1].argmax())]])
        start = now()
        for i in range(decode):
            logits = forward(token, torch.tensor([prompt + i]))
            token = torch.tensor([[int(logits.reshape(-1, logits.shape[-1])[-1].argmax())]])
        steps.append(now() - start)
    rss = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                rss = int(line.split()[1]) * 1024
    print(json.dumps({"prefill_tok_s": prompt / statistics.median(prefill),
                      "decode_tok_s": decode / statistics.median(steps),
                      "peak_rss_mb": rss / 2**20}))
""")


def make_checkpoint(directory: str, params: dict) -> tuple:
    """params.json and a random checkpoint (weights scaled like a trained
    model's, std 0.02) in `directory`."""
    sys.path.insert(0, os.path.dirname(REPO))
    from executorch.examples.models.llama.llama_transformer import Transformer
    from executorch.examples.models.llama.model_args import ModelArgs

    torch.manual_seed(0)
    model = Transformer(ModelArgs(**params, max_seq_len=8, max_context_len=8))
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.02)
    paths = os.path.join(directory, "params.json"), os.path.join(directory, "ckpt.pth")
    with open(paths[0], "w") as f:
        json.dump(params, f)
    torch.save(model.state_dict(), paths[1])
    return paths, model


def decode_bytes(model, mode: str, group: int) -> int:
    """Bytes of weights one decode step must read: all but the embedding
    table (of which it reads one row); 8da4w's linears as 4-bit values with
    an fp32 scale per group."""
    total = 0
    for name, p in model.named_parameters():
        if name.startswith("tok_embeddings"):
            continue
        quantized = mode == "8da4w" and p.dim() == 2
        total += p.numel() * (0.5 + 4 / group) if quantized else p.numel() * 4
    return int(total)


def export_flags(paths, mode: str, context: int, output: str, group: int) -> list:
    flags = ["-p", paths[0], "-c", paths[1], "-kv", "--use_sdpa_with_kv_cache", "-X",
             "--max_seq_length", str(context), "--max_context_length", str(context),
             "--output_name", output]
    if mode == "8da4w":
        flags += ["-qmode", "8da4w", "-G", str(group)]
    return flags


def export(python: str, flags: list) -> None:
    subprocess.run([python, "-m", "executorch.examples.models.llama.export_llama", *flags],
                   check=True, capture_output=True, cwd=tempfile.gettempdir())


def measure(python: str, kind: str, path: str, args) -> dict:
    out = subprocess.run(
        [python, "-c", _WORKER, kind, path, str(args.prompt), str(args.decode),
         str(args.rounds), str(args.threads), args.clock],
        check=True, capture_output=True, text=True, cwd=tempfile.gettempdir(),
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--modes", nargs="+", default=["fp32", "8da4w"])
    parser.add_argument("--prompt", type=int, default=64)
    parser.add_argument("--decode", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--clock", choices=["wall", "cpu"], default="wall",
        help="wall-clock time, or the worker's CPU time (all threads)")
    parser.add_argument("--quick", action="store_true", help="tiny model, one short round")
    args = parser.parse_args()
    group = 32 if args.quick else 128
    if args.quick:
        args.prompt, args.decode, args.rounds = 8, 4, 1
    ours = sys.executable
    upstream = os.environ.get("EXECUTORCH_UPSTREAM_PYTHON")
    if upstream and not os.path.exists(upstream):
        upstream = None
    context = args.prompt + args.decode + 1
    with tempfile.TemporaryDirectory() as work:
        paths, model = make_checkpoint(work, TINY if args.quick else FULL)
        count = sum(p.numel() for p in model.parameters())
        # Only the byte counts are needed: the model's fp32 weights would
        # otherwise stay in this process while the workers run.
        nbytes = {mode: decode_bytes(model, mode, group) for mode in args.modes}
        del model
        print(f"model: {count / 1e6:.1f}M parameters, prompt {args.prompt}, decode "
              f"{args.decode}, {args.threads} threads, {args.clock} clock, load "
              f"average {os.getloadavg()[0]:.2f}")
        print(f"{'system':<22}{'prefill tok/s':>15}{'decode tok/s':>15}"
              f"{'ms/token':>10}{'peak RSS MB':>14}")
        for mode in args.modes:
            results = {}
            systems = [("ours", ours)] + ([("upstream", upstream)] if upstream else [])
            for name, python in systems:
                pte = os.path.join(work, f"{name}_{mode}.pte")
                export(python, export_flags(paths, mode, context, pte, group))
                results[name] = measure(python, "pte", pte, args)
            if mode == "fp32":
                # Plain torch attention and linears in eager.
                flags = ["-p", paths[0], "-c", paths[1], "-kv", "--max_seq_length",
                         str(context), "--max_context_length", str(context)]
                results["eager"] = measure(ours, "eager", json.dumps(flags), args)
            for name, r in results.items():
                print(f"{name + ' ' + mode:<22}{r['prefill_tok_s']:>15.1f}"
                      f"{r['decode_tok_s']:>15.1f}{1e3 / r['decode_tok_s']:>10.2f}"
                      f"{r['peak_rss_mb']:>14.0f}")
            if args.clock == "wall":
                bound = read_seconds(nbytes[mode], args.threads)
                print(f"memory bound {mode}: {nbytes[mode] / 1e6:.0f} MB per token read at "
                      f"{nbytes[mode] / bound / 1e9:.1f} GB/s = {bound * 1e3:.2f} ms/token; "
                      + ", ".join(f"{name} {1 / r['decode_tok_s'] / bound:.2f}x"
                                  for name, r in results.items()) + " of it")
            if "upstream" in results:
                o, u = results["ours"], results["upstream"]
                print(f"{'ours / upstream':<22}{o['prefill_tok_s'] / u['prefill_tok_s']:>15.2f}"
                      f"{o['decode_tok_s'] / u['decode_tok_s']:>15.2f}{'':>10}"
                      f"{o['peak_rss_mb'] / u['peak_rss_mb']:>14.2f}")
        if not upstream:
            print("upstream: skipped (EXECUTORCH_UPSTREAM_PYTHON is not set)")


if __name__ == "__main__":
    main()
