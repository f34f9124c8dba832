"""Sweep many models through our export and runtime against eager PyTorch.

Two families of models, each named on the command line:

  hf:<model_type>  a Hugging Face architecture (any type transformers can
                   build as a bare model) from a small config, random
                   weights, nothing downloaded
  random:<seed>    a random stack of layers drawn from the seed: a CNN
                   (plain, depthwise, grouped, dilated and transposed
                   convolutions, batch norm, pools, padding, activations,
                   residual adds, squeeze-excite gates, concatenations,
                   upsampling, pixel and channel shuffles; sometimes a
                   channels-last input) or a sequence model (linears,
                   layer and RMS norms, attention written out or as
                   scaled_dot_product_attention, softmax over either dim,
                   transposes, slices, reductions), with sizes that are
                   not multiples of a vector width
  dynamic:<seed>   a random sequence model exported with a dynamic token
                   count, run at the example's length and at others

Each model goes through the staged test harness
(executorch.backends.test.harness.Tester): exported with torch.export,
lowered through the default path (plain to_edge, the optimized kernels)
and through XNNPACK, run by our runtime at 1 and 2 threads and compared
with eager on the same input at the harness's "accumulating" tolerance
(fp32: rtol 1e-4, atol 1e-5). Each model runs in a child process with a
time limit, so a crash is a finding (a "crash" row), not the end of the
sweep. Verdicts:

  ok        every path and thread count matches eager
  rounding  off eager by more than the tolerance, but at most 10 times
            as far from a float64 run of the model as eager is: rounding
            (summation order, Winograd's transforms), printed with the
            ratio
  mismatch  a path ran but differs from eager (ours to fix)
  ours      our lowering, serialization or runtime failed (ours to fix)
  crash     the child died or timed out (ours to fix)
  skipped   transformers could not build or run the model from a small
            config, torch.export could not export it, or it holds
            operators outside Core ATen that upstream's to_edge rejects
            too (not ours)

Usage:
  python scripts/model_sweep.py                     # every hf type, 50 + 20 seeds
  python scripts/model_sweep.py hf:bert random:7    # some
  python scripts/model_sweep.py --random 200        # random:0 .. random:199
  python scripts/model_sweep.py --dynamic 50        # dynamic:0 .. dynamic:49
  python scripts/model_sweep.py --list              # the hf names

Exits 1 when any row is mismatch, ours or crash. Slow (seconds per model):
a script, not a test; test/e2e/test_model_sweep.py runs a few.
"""

import argparse
import copy
import itertools
import json
import random
import subprocess
import sys
import traceback
from typing import Any, NamedTuple

import torch
from torch import nn
from torch.export import Dim

FAILING = ("mismatch", "ours", "crash")
PATHS = ("default", "xnnpack")
# Off eager by more than the harness allows but at most this many times
# eager's own distance from a float64 run: rounding (a different summation
# order, Winograd's transforms), not a bug.
ROUNDING_RATIO = 10.0
THREADS = (1, 2)

# Config fields set when a Hugging Face config has them: small enough to
# export and run in seconds, large enough for every layer kind to appear.
SMALL_CONFIG = dict(
    hidden_size=64,
    d_model=64,
    n_embd=64,
    num_hidden_layers=2,
    num_layers=2,
    n_layer=2,
    encoder_layers=2,
    decoder_layers=2,
    num_attention_heads=4,
    n_head=4,
    encoder_attention_heads=4,
    decoder_attention_heads=4,
    num_key_value_heads=2,
    intermediate_size=128,
    encoder_ffn_dim=128,
    decoder_ffn_dim=128,
    vocab_size=1000,
    max_position_embeddings=128,
    image_size=64,
    num_channels=3,
)


class Case(NamedTuple):
    """A model, its example inputs and how to export it."""

    model: nn.Module
    inputs: tuple
    # torch.export's dynamic_shapes, and inputs of other sizes they allow.
    dynamic_shapes: Any = None
    other_inputs: tuple = ()


def hf_names():
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    return [f"hf:{t}" for t in sorted(MODEL_MAPPING_NAMES)]


def build_hf(model_type):
    """A Case from a small config; raises when transformers can't."""
    from transformers import AutoConfig, AutoModel

    defaults = AutoConfig.for_model(model_type)
    settings = defaults.to_dict()
    # Only plain integer fields: a list (per-stage widths or heads) says the
    # model is built some other way.
    overrides = {k: v for k, v in SMALL_CONFIG.items()
                 if type(settings.get(k)) is int}
    if "hidden_sizes" in settings:
        overrides.pop("hidden_size", None)
    if "hidden_size" in overrides:
        for key in ("head_dim", "rotary_dim"):
            if settings.get(key):
                overrides[key] = overrides["hidden_size"] // 4
    # Special tokens past the small vocabulary become token 0.
    for key, value in settings.items():
        if key.endswith("token_id") and isinstance(value, int) and value >= 1000:
            overrides[key] = 0
    if hasattr(defaults, "use_cache"):
        overrides["use_cache"] = False  # outputs without a KV cache object
    config = AutoConfig.for_model(model_type, **overrides)
    if getattr(config, "is_encoder_decoder", False):
        raise ValueError("encoder-decoder models need decoder inputs")
    model = AutoModel.from_config(config)
    name = model.main_input_name
    if name == "input_ids":
        vocab = min(getattr(config, "vocab_size", None) or 1000, 1000)
        return Case(model, (torch.randint(0, vocab, (1, 12)),))
    if name == "pixel_values":
        return Case(model, (torch.randn(1, 3, 64, 64),))
    if name == "input_values":
        return Case(model, (torch.randn(1, 16000),))
    raise ValueError(f"main input {name!r} has no sample here")


class Stack(nn.Module):
    """Steps applied in order; a step's kind says how its module is used."""

    def __init__(self):
        super().__init__()
        self.steps = nn.ModuleList()
        self.kinds = []

    def add(self, kind, module=None):
        self.kinds.append(kind)
        self.steps.append(module if module is not None else nn.Identity())

    def forward(self, x):
        for kind, step in zip(self.kinds, self.steps):
            if kind == "residual":
                x = x + step(x)
            elif kind == "gate":  # squeeze-excite
                x = x * torch.sigmoid(step(x.mean((2, 3), keepdim=True)))
            elif kind == "concat_channels":
                x = torch.cat([x, step(x)], dim=1)
            elif kind == "concat_features":
                x = torch.cat([x, step(x)], dim=-1)
            elif kind == "channels_last_norm":
                x = step(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
            elif kind == "softmax_tokens":
                x = x.softmax(1)
            elif kind == "transpose_linear":
                x = step(x.transpose(1, 2)).transpose(1, 2)
            elif kind == "slice":
                x = x[:, 1:]
            elif kind == "center":
                x = x - x.mean(-1, keepdim=True)
            elif kind == "channel_shuffle":
                n, c, h, w = x.shape
                x = x.reshape(n, 2, c // 2, h, w).transpose(1, 2).reshape(
                    n, c, h, w)
            elif kind == "rotate_half":  # rotary embeddings' shuffle
                half = x.shape[-1] // 2
                x = x * 0.5 + torch.cat([-x[..., half:], x[..., :half]], -1)
            elif kind == "log_softmax":
                x = x.log_softmax(-1)
            else:
                x = step(x)
        return x


class Attention(nn.Module):
    """Multi-head self-attention, written out (scale, causal mask as an
    added -inf) or as scaled_dot_product_attention."""

    def __init__(self, dim, heads, masked, fused):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.heads, self.masked, self.fused = heads, masked, fused

    def forward(self, x):
        n, t, d = x.shape
        q, k, v = self.qkv(x).reshape(n, t, 3, self.heads, -1).permute(
            2, 0, 3, 1, 4)
        if self.fused:
            y = nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=self.masked)
            return self.out(y.transpose(1, 2).reshape(n, t, d))
        scores = q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5
        if self.masked:
            scores = scores + torch.full((t, t), float("-inf")).triu(1)
        y = (scores.softmax(-1) @ v).transpose(1, 2).reshape(n, t, d)
        return self.out(y)


def random_cnn(rng):
    """A random CNN on [N, C, H, W], as a Case."""
    activations = [nn.ReLU, nn.ReLU6, nn.Hardswish, nn.SiLU, nn.GELU,
                   nn.Sigmoid, nn.Tanh, nn.LeakyReLU, nn.Hardsigmoid]
    batch = rng.choice([1, 1, 2])
    channels = rng.choice([3, 5, 8, 16])
    size = rng.randint(9, 40)
    x = torch.randn(batch, channels, size, rng.choice([size, size + 3]))
    net = Stack()
    for _ in range(rng.randint(2, 7)):
        kind = rng.choice(["conv", "conv", "depthwise", "bn", "act", "pool",
                           "residual", "gate", "concat", "upsample",
                           "channels_last_norm", "grouped", "dilated",
                           "transposed", "pad", "prelu", "pixel_shuffle",
                           "adaptive_pool", "channel_shuffle"])
        small = size <= 6
        if kind in ("conv", "depthwise"):
            k = rng.choice([1, 3, 5])
            stride = 1 if small else rng.choice([1, 1, 2])
            out = channels if kind == "depthwise" else rng.choice(
                [4, 8, 13, 16, 24, 33])
            groups = channels if kind == "depthwise" else 1
            net.add(kind, nn.Conv2d(channels, out, k, stride, k // 2,
                                    groups=groups, bias=rng.random() < 0.7))
            channels, size = out, (size - 1) // stride + 1
        elif kind == "bn":
            bn = nn.BatchNorm2d(channels)
            bn.running_mean.uniform_(-1, 1)
            bn.running_var.uniform_(0.5, 2)
            net.add(kind, bn)
        elif kind == "act":
            net.add(kind, rng.choice(activations)())
        elif kind == "pool" and not small:
            pool = rng.choice([nn.MaxPool2d, nn.AvgPool2d])
            k = rng.choice([2, 3])
            net.add(kind, pool(k, 2, padding=k // 2 if k == 3 else 0))
            size = (size + 2 * (k // 2 if k == 3 else 0) - k) // 2 + 1
        elif kind == "residual":
            net.add(kind, nn.Sequential(
                nn.Conv2d(channels, channels, 3, 1, 1), nn.ReLU()))
        elif kind == "gate":
            net.add(kind, nn.Conv2d(channels, channels, 1))
        elif kind == "concat":
            out = rng.choice([3, 8, 16])
            net.add("concat_channels", nn.Conv2d(channels, out, 1))
            channels += out
        elif kind == "upsample" and size <= 20:
            mode = rng.choice(["nearest", "bilinear"])
            net.add(kind, nn.Upsample(scale_factor=2, mode=mode))
            size *= 2
        elif kind == "channels_last_norm":
            net.add(kind, nn.LayerNorm(channels))
        elif kind == "grouped" and channels % 2 == 0:
            groups = rng.choice([g for g in (2, 4, 8) if channels % g == 0])
            out = groups * rng.choice([1, 2, 3])
            net.add(kind, nn.Conv2d(channels, out, 3, 1, 1, groups=groups))
            channels = out
        elif kind == "dilated" and not small:
            net.add(kind, nn.Conv2d(channels, channels, 3, 1, 2, dilation=2))
        elif kind == "transposed" and size <= 20:
            out = rng.choice([4, 8, 13])
            net.add(kind, nn.ConvTranspose2d(channels, out, 2, 2))
            channels, size = out, size * 2
        elif kind == "pad":
            pad = rng.choice([nn.ReflectionPad2d, nn.ReplicationPad2d,
                              nn.ZeroPad2d])
            net.add(kind, pad(1))
            size += 2
        elif kind == "prelu":
            net.add(kind, nn.PReLU(channels, init=rng.uniform(0.05, 0.3)))
        elif kind == "pixel_shuffle" and channels % 4 == 0 and size <= 20:
            net.add(kind, nn.PixelShuffle(2))
            channels, size = channels // 4, size * 2
        elif kind == "adaptive_pool" and not small:
            net.add(kind, nn.AdaptiveAvgPool2d(rng.choice([3, 5])))
            size = 5  # at most; the steps after only need a small size
        elif kind == "channel_shuffle" and channels % 2 == 0:
            net.add(kind)
    if rng.random() < 0.3:
        # A channels-last input: the program's dim order follows it.
        x = x.contiguous(memory_format=torch.channels_last)
    if rng.random() < 0.5:
        net.add("head", nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                      nn.Linear(channels, 10)))
    return Case(net, (x,))


def random_sequence_model(rng, dynamic=False):
    """A random sequence model on [N, T, D], as a Case; with `dynamic`
    exported for any T from a few to 64 and run at other lengths too."""
    activations = [nn.ReLU, nn.GELU, nn.SiLU, nn.Tanh, nn.Sigmoid]
    batch = rng.choice([1, 2])
    tokens = rng.choice([17, 33, 64] if dynamic else [1, 5, 17, 33, 64])
    dim = rng.choice([8, 20, 33, 64])
    x = torch.randn(batch, tokens, dim)
    net = Stack()
    for _ in range(rng.randint(2, 7)):
        kind = rng.choice(["linear", "linear", "norm", "act", "attention",
                           "residual", "softmax", "softmax_tokens",
                           "transpose_linear", "slice", "concat",
                           "center", "rms_norm", "log_softmax",
                           "rotate_half"])
        if kind == "linear":
            out = rng.choice([8, 16, 20, 33, 64, 96])
            net.add(kind, nn.Linear(dim, out, bias=rng.random() < 0.8))
            dim = out
        elif kind == "norm":
            net.add(kind, nn.LayerNorm(dim))
        elif kind == "act":
            net.add(kind, rng.choice(activations)())
        elif kind == "attention" and dim % 4 == 0:
            net.add("residual", Attention(dim, rng.choice([1, 2, 4]),
                                          rng.random() < 0.5,
                                          rng.random() < 0.3))
        elif kind == "residual":
            net.add(kind, nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(),
                                        nn.Linear(2 * dim, dim)))
        elif kind == "softmax":
            net.add(kind, nn.Softmax(-1))
        elif kind == "transpose_linear" and not dynamic:
            # (a linear over the tokens fixes their count)
            net.add(kind, nn.Linear(tokens, tokens))
        elif kind == "slice" and tokens > 1:
            net.add(kind)
            tokens -= 1
        elif kind == "concat":
            out = rng.choice([4, 16])
            net.add("concat_features", nn.Linear(dim, out))
            dim += out
        elif kind in ("softmax_tokens", "center", "log_softmax"):
            net.add(kind)
        elif kind == "rotate_half" and dim % 2 == 0:
            net.add(kind)
        elif kind == "rms_norm":
            net.add(kind, nn.RMSNorm(dim, eps=1e-6))
    if not dynamic:
        return Case(net, (x,))
    # Each slice drops a token; at least 2 are left (a dim of 1 would be
    # specialized).
    shortest = net.kinds.count("slice") + 2
    n, t, d = x.shape
    lengths = sorted({shortest, (shortest + t) // 2, 64} - {t})
    return Case(net, (x,), ({1: Dim("tokens", min=shortest, max=64)},),
                tuple((torch.randn(n, length, d),) for length in lengths))


def build_random(seed):
    rng = random.Random(seed)
    make = random_cnn if rng.random() < 0.5 else random_sequence_model
    return make(rng)


def name_error(name):
    """What is wrong with a model name, or None."""
    family, _, what = name.partition(":")
    if family == "hf" and what:
        return None
    if family in ("random", "dynamic") and what.isdigit():
        return None
    return f"{name!r}: expected hf:<model_type>, random:<seed> or dynamic:<seed>"


def build(name):
    family, _, what = name.partition(":")
    if family == "hf":
        case = build_hf(what)
    elif family == "random":
        case = build_random(int(what))
    else:
        case = random_sequence_model(random.Random(int(what)), dynamic=True)
    case.model.eval()
    return case


def run_one(name):
    """One model's row (a dict), in this process."""
    from executorch.backends.test.harness import Tester
    from executorch.backends.test.harness.tester import ACCUMULATING
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
        XnnpackPartitioner,
    )
    from executorch.extension.pybindings import portable_lib

    row = {"name": name}
    torch.manual_seed(0)
    print("#stage build", flush=True)
    try:
        case = build(name)
        with torch.no_grad():
            for inputs in (case.inputs, *case.other_inputs):
                case.model(*inputs)
        testers = {
            p: Tester(case.model, case.inputs, case.dynamic_shapes).export(
                strict=False)
            for p in PATHS
        }
    except Exception as e:  # noqa: BLE001 - any failure here is not ours
        row.update(verdict="skipped", reason=f"{type(e).__name__}: {e}"[:300])
        return row
    print("#stage ours", flush=True)
    rounding = []  # (ratio, path) of each run off eager by rounding only
    for path, tester in testers.items():
        row.update(path=path)
        try:
            if path == "xnnpack":
                tester.to_edge_transform_and_lower([XnnpackPartitioner()])
            tester.serialize()
        except Exception as e:  # noqa: BLE001 - reported in the row
            if "not a Core ATen operator" in str(e):
                # torch has no decomposition for them; upstream's to_edge
                # rejects them too.
                row.update(verdict="skipped", reason=str(e).splitlines()[0])
            else:
                row.update(verdict="ours", reason=traceback.format_exc())
            return row
        for threads, inputs in itertools.product(
                THREADS, (case.inputs, *case.other_inputs)):
            row.update(path=f"{path}, {threads} thread(s)")
            if case.other_inputs:
                shapes = ", ".join(str(tuple(x.shape)) for x in inputs)
                row["path"] += f", input {shapes}"
            portable_lib._unsafe_reset_threadpool(threads)
            try:
                tester.run_method_and_compare_outputs(
                    inputs, precision=ACCUMULATING)
            except AssertionError as e:
                ratio = error_ratio_to_eager(tester, inputs)
                if ratio is None or ratio > ROUNDING_RATIO:
                    row.update(verdict="mismatch", reason=str(e))
                    return row
                rounding.append((ratio, row["path"]))
            except Exception:  # noqa: BLE001 - reported in the row
                row.update(verdict="ours", reason=traceback.format_exc())
                return row
    del row["path"]
    row["verdict"] = "ok"
    if rounding:
        ratio, where = max(rounding)
        row.update(verdict="rounding", path=where, reason=(
            f"against a float64 run: ours up to {ratio:.1f} x eager's error"))
    return row


def error_ratio_to_eager(tester, inputs):
    """How much farther our outputs are from a float64 run of the tester's
    model than eager's float32 ones (the worst output); None when the model
    does not run in float64 or an exact output differs."""
    model = tester.reference
    as64 = [x.double() if x.is_floating_point() else x for x in inputs]
    try:
        with torch.no_grad():
            want64 = torch.utils._pytree.tree_leaves(
                copy.deepcopy(model).double()(*as64))
            want32 = torch.utils._pytree.tree_leaves(model(*inputs))
    except Exception:  # noqa: BLE001 - no float64 judge for this model
        return None
    worst = 0.0
    for got, w32, w64 in zip(tester.run_method(inputs=inputs), want32, want64):
        if not w64.is_floating_point():
            if not torch.equal(got, w32):
                return None
        elif w64.numel():
            ours = float((got.double() - w64).abs().max())
            eager = float((w32.double() - w64).abs().max())
            floor = 1e-7 * float(w64.abs().max()) + 1e-30
            worst = max(worst, ours / max(eager, floor))
    return worst


def run_in_child(name, timeout):
    try:
        done = subprocess.run([sys.executable, __file__, "--child", name],
                              capture_output=True, text=True, timeout=timeout)
        stdout, reason = done.stdout, f"exit code {done.returncode}: "
        reason += done.stderr[-600:]
    except subprocess.TimeoutExpired as e:
        stdout, reason = e.stdout or "", f"timed out after {timeout} s"
        if isinstance(stdout, bytes):
            stdout = stdout.decode(errors="replace")
    lines = stdout.splitlines()
    if lines and lines[-1].startswith("{"):
        return json.loads(lines[-1])
    # Dying while PyTorch builds, runs or exports the model (one too large
    # for the machine) is not ours; dying after is.
    verdict = "crash" if "#stage ours" in lines else "skipped"
    return {"name": name, "verdict": verdict, "reason": reason}


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n", 2)[2])
    parser.add_argument("names", nargs="*",
                        help="hf:<model_type>, random:<seed> or "
                        "dynamic:<seed>")
    parser.add_argument("--random", type=int, metavar="N",
                        help="add random:0 .. random:N-1")
    parser.add_argument("--dynamic", type=int, metavar="N",
                        help="add dynamic:0 .. dynamic:N-1")
    parser.add_argument("--list", action="store_true",
                        help="print the hf names and exit")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds per model (default 300)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(args.child)))
        return 0
    if args.list:
        print("\n".join(hf_names()))
        return 0
    names = list(args.names)
    for name in names:
        if name_error(name):
            parser.error(name_error(name))
    for family in ("random", "dynamic"):
        names += [f"{family}:{seed}" for seed in range(getattr(args, family) or 0)]
    if not names:
        names = hf_names() + [f"random:{seed}" for seed in range(50)]
        names += [f"dynamic:{seed}" for seed in range(20)]
    counts = {}
    for name in names:
        row = run_in_child(name, args.timeout)
        verdict = row["verdict"]
        counts[verdict] = counts.get(verdict, 0) + 1
        where = f" ({row['path']})" if "path" in row else ""
        print(f"{name:32s} {verdict}{where}", flush=True)
        if verdict != "ok":
            lines = row.get("reason", "").strip().splitlines()
            for line in lines[-8:] if verdict in FAILING else lines[-1:]:
                print(f"    {line}")
    print(" ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    return 1 if any(counts.get(v) for v in FAILING) else 0


if __name__ == "__main__":
    sys.exit(main())
