"""Corrupts valid programs the way a damaged download or a crafted file would
and runs each mutant in a subprocess, counting the ones that crash or hang.

    .venv/bin/python test/fuzz/mutate_programs.py [--count 200] [--seed 0]
        [--runner build/examples/executor_runner/executor_runner]
        [--keep out/mutants] [program.pte ...]

Without programs it mutates the seed corpus (test/fuzz/corpus/program/).
Each mutant is one of: bit flips, an extreme 32- or 64-bit value written at
an aligned offset, a truncation, or a chunk of one program spliced over
another. The runner loads the mutant and executes its first method with
inputs of ones; exiting with an error is the expected outcome for most
mutants. A death by signal, a sanitizer report or a run longer than
--timeout seconds counts as a failure: those mutants are written to --keep
(default out/mutants) and the exit status is 1.

It complements the libFuzzer targets (test/fuzz/README.md): no coverage
guidance, but it runs the real command-line runner on any build, including
a sanitizer build (--runner build-asan/...).
"""

import argparse
import collections
import os
import pathlib
import random
import struct
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]

# Values that break size and offset arithmetic: zero, one, all bits, the
# signed extremes and their neighbours, and powers of two near them.
EXTREME_32 = [0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x10000,
              0x7FFFFFFE, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFE,
              0xFFFFFFFF]
EXTREME_64 = EXTREME_32 + [0x100000000, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000,
                           0xFFFFFFFFFFFFFFFF, 0xFFFFFFFF00000000]

SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "runtime error:",
                     "ERROR: LeakSanitizer", "ERROR: UndefinedBehaviorSanitizer")


def bit_flips(data, rng, _others):
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(out))
        out[i] ^= 1 << rng.randrange(8)
    return bytes(out)


def extreme_value(data, rng, _others):
    out = bytearray(data)
    width = rng.choice((4, 8))
    if len(out) < width:
        return bytes(out)
    offset = rng.randrange(0, len(out) - width + 1, width)
    value = rng.choice(EXTREME_32 if width == 4 else EXTREME_64)
    out[offset : offset + width] = struct.pack("<I" if width == 4 else "<Q", value)
    return bytes(out)


def truncation(data, rng, _others):
    return data[: rng.randrange(len(data))]


def splice(data, rng, others):
    donor = rng.choice(others)
    length = rng.randint(1, min(64, len(donor)))
    start = rng.randrange(len(donor) - length + 1)
    at = rng.randrange(len(data))
    out = bytearray(data)
    out[at : at + length] = donor[start : start + length]
    return bytes(out)


MUTATORS = {
    "bit_flips": bit_flips,
    "extreme_value": extreme_value,
    "truncation": truncation,
    "splice": splice,
}


def run_mutant(runner, path, timeout):
    """'ok', 'error', 'crash' or 'timeout', and the output's last lines."""
    try:
        result = subprocess.run(
            [str(runner), "--model_path", str(path), "--num_executions", "1"],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return "timeout", ""
    output = result.stdout + result.stderr
    tail = "\n".join(output.strip().splitlines()[-3:])
    if result.returncode < 0 or any(m in output for m in SANITIZER_MARKERS):
        return "crash", tail
    return ("ok" if result.returncode == 0 else "error"), tail


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("programs", nargs="*", type=pathlib.Path)
    parser.add_argument("--count", type=int, default=200, help="mutants per program")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument(
        "--runner",
        type=pathlib.Path,
        default=REPO / "build/examples/executor_runner/executor_runner",
    )
    parser.add_argument("--keep", type=pathlib.Path, default=REPO / "out/mutants")
    args = parser.parse_args()

    programs = args.programs or sorted((HERE / "corpus/program").glob("*.pte"))
    if not programs:
        sys.exit("no programs to mutate")
    if not os.access(args.runner, os.X_OK):
        sys.exit(f"runner {args.runner} not found; build it first")
    originals = {p: p.read_bytes() for p in programs}
    donors = list(originals.values())
    rng = random.Random(args.seed)
    counts = collections.Counter()
    failures = []
    scratch = args.keep / "current.pte"
    args.keep.mkdir(parents=True, exist_ok=True)

    for path, data in originals.items():
        for n in range(args.count):
            strategy = rng.choice(sorted(MUTATORS))
            mutant = MUTATORS[strategy](data, rng, donors)
            scratch.write_bytes(mutant)
            outcome, tail = run_mutant(args.runner, scratch, args.timeout)
            counts[outcome] += 1
            counts[(strategy, outcome)] += 1
            if outcome in ("crash", "timeout"):
                kept = args.keep / f"{path.stem}-{n}-{strategy}-{outcome}.pte"
                kept.write_bytes(mutant)
                failures.append(kept)
                print(f"{outcome}: {kept}\n  {tail}", flush=True)
    scratch.unlink(missing_ok=True)

    total = sum(counts[o] for o in ("ok", "error", "crash", "timeout"))
    print(f"{total} mutants of {len(programs)} programs")
    for strategy in sorted(MUTATORS):
        row = ", ".join(
            f"{o} {counts[(strategy, o)]}" for o in ("ok", "error", "crash", "timeout")
        )
        print(f"  {strategy:14s} {row}")
    print(f"crashes {counts['crash']}, timeouts {counts['timeout']}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
