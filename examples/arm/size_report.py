"""Prints where the flash and RAM of Cortex-M firmware images go, from the
link maps the build writes next to them (<image>.elf.map):

    size_report.py --board mps2-an386 arm_core_runner.elf arm_executor_runner.elf

Flash is what the image stores: code, constants (.text, .rodata, unwind
tables) and the initial values of .data. RAM is .data, .bss, the runtime's
static arenas (.arena: method, temp and planned memory) and the stack. Each
input section is attributed to the part of the firmware its object file
belongs to.
"""

import argparse
import os
import re
import sys
from collections import defaultdict
from typing import Dict, Tuple

# (pattern on the object file path or section name, part), first match wins.
PARTS = [
    (re.compile(r"kProgram|kInputs"), "model (.pte, inputs)"),
    (re.compile(r"libexecutorch_core\.a|data_loader/"), "runtime core"),
    (
        re.compile(r"portable_ops_lib|libprim_ops|codegen_unboxing|kernels"),
        "kernels",
    ),
    (re.compile(r"cortex_m_pal"), "PAL and startup"),
    (re.compile(r"arm_executor_runner\.cpp"), "runner"),
    (
        re.compile(r"lib(c|g|m|gcc|stdc\+\+|supc\+\+|nosys)(_nano)?\.a"),
        "C/C++ library",
    ),
]
FLASH_SECTIONS = {".text", ".ARM.exidx"}
RAM_SECTIONS = {".bss", ".arena", ".stack"}
MERGED = "merged strings, alignment"
ARENAS = "arenas (method, temp, planned)"
ORDER = [part for _, part in PARTS] + [ARENAS, "linker (stack, padding)", MERGED]

_OUTPUT = re.compile(r"^(\.[\w.]+)\s")
# An input section: " .name [0xADDRESS 0xSIZE [object]]"; a long name puts
# the rest on the next line (_CONTINUED).
_INPUT = re.compile(
    r"^ (\.[\w.$]+|\*fill\*|COMMON)"
    r"(?:\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)(?:\s+(\S.*))?)?$"
)
_CONTINUED = re.compile(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)(?:\s+(\S.*))?$")


def part_of(section: str, source: str) -> str:
    for pattern, part in PARTS:
        if pattern.search(section) or pattern.search(source):
            return part
    return "linker (stack, padding)"




def attribute(map_path: str) -> Dict[str, Tuple[int, int]]:
    """part -> (flash bytes, RAM bytes). The map lists string constants per
    object before the linker merges duplicates; the MERGED part (negative)
    makes the parts add up to the output sections' sizes."""
    sizes = defaultdict(lambda: [0, 0])
    totals = [0, 0]
    with open(map_path) as f:
        lines = f.read().split("Linker script and memory map", 1)[-1].splitlines()
    output = None
    pending = None  # an input section whose address is on the next line
    for line in lines:
        match = _OUTPUT.match(line)
        if match:
            output = match.group(1)
            fields = line.split()
            if len(fields) >= 3 and fields[2].startswith("0x"):
                size = int(fields[2], 16)
                totals[0] += size if output in FLASH_SECTIONS | {".data"} else 0
                totals[1] += size if output in RAM_SECTIONS | {".data"} else 0
                # The stack is an output section with no input sections.
                if output == ".stack":
                    sizes["linker (stack, padding)"][1] += size
            pending = None
            continue
        if output is None:
            continue
        match = _INPUT.match(line)
        if match:
            section, address, size, source = match.groups()
            if size is None:
                pending = section
                continue
        elif pending is not None and _CONTINUED.match(line):
            address, size, source = _CONTINUED.match(line).groups()
            section, pending = pending, None
        else:
            continue
        size = int(size, 16)
        if size == 0 or output == ".stack":
            continue
        part = ARENAS if output == ".arena" else part_of(section, source or "")
        if output in FLASH_SECTIONS or output == ".data":
            sizes[part][0] += size
        if output in RAM_SECTIONS or output == ".data":
            sizes[part][1] += size
    sizes[MERGED][0] = totals[0] - sum(flash for flash, _ in sizes.values())
    sizes[MERGED][1] = totals[1] - sum(ram for _, ram in sizes.values())
    return {part: tuple(value) for part, value in sizes.items()}


def print_table(image: str, board: str, sizes: Dict[str, Tuple[int, int]]) -> None:
    print(f"{os.path.basename(image)} on {board}:")
    print(f"  {'part':<32} {'flash':>10} {'RAM':>10}")
    for part in ORDER:
        flash, ram = sizes.get(part, (0, 0))
        if flash or ram:
            print(f"  {part:<32} {flash:>10,} {ram:>10,}")
    total_flash = sum(f for f, _ in sizes.values())
    total_ram = sum(r for _, r in sizes.values())
    print(f"  {'total':<32} {total_flash:>10,} {total_ram:>10,}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", default="")
    parser.add_argument("images", nargs="+", help="firmware .elf files")
    args = parser.parse_args(argv)
    for image in args.images:
        map_path = image + ".map"
        if not os.path.exists(map_path):
            print(f"size_report: no link map {map_path}", file=sys.stderr)
            return 1
        print_table(image, args.board or "?", attribute(map_path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
