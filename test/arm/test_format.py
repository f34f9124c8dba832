"""The firmware's small printf (examples/arm/cortex_m/format.cpp), built for
the host, prints what C's printf prints (Python's % operator follows it) for
integers, strings and floats, including correctly rounded %.9g of every
float32 tried; truncation follows vsnprintf's contract."""

import os
import random
import shutil
import struct
import subprocess

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FORMAT_CPP = os.path.join(REPO_ROOT, "examples", "arm", "cortex_m", "format.cpp")

# Reads "FORMAT\tKIND\tVALUE" lines (KIND: d integer, f double, s string)
# and prints et_snprintf's result and return value for each.
DRIVER = r"""
#include <executorch/examples/arm/cortex_m/format.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
int main() {
  char line[512];
  while (std::fgets(line, sizeof(line), stdin)) {
    line[std::strcspn(line, "\n")] = '\0';
    char* format = std::strtok(line, "\t");
    char* kind = std::strtok(nullptr, "\t");
    char* value = std::strtok(nullptr, "\t");
    if (value == nullptr) value = const_cast<char*>("");
    char out[256];
    int n = 0;
    if (kind[0] == 'd') n = et_snprintf(out, sizeof(out), format, std::strtoll(value, nullptr, 10));
    if (kind[0] == 'f') n = et_snprintf(out, sizeof(out), format, std::strtod(value, nullptr));
    if (kind[0] == 's') n = et_snprintf(out, sizeof(out), format, value);
    if (kind[0] == 't') n = et_snprintf(out, 6, format, std::strtoll(value, nullptr, 10));
    std::printf("%s|%d\n", out, n);
  }
}
"""


@pytest.fixture(scope="module")
def formatter(tmp_path_factory):
    compiler = shutil.which("g++")
    if compiler is None:
        pytest.skip("no host C++ compiler")
    out = tmp_path_factory.mktemp("format")
    include = out / "include"
    include.mkdir()
    os.symlink(REPO_ROOT, include / "executorch")
    driver = out / "driver.cpp"
    driver.write_text(DRIVER)
    binary = out / "driver"
    subprocess.run(
        [compiler, "-std=c++17", "-O1", f"-I{include}", str(driver), FORMAT_CPP,
         "-o", str(binary)],
        check=True,
    )

    def run(cases):
        text = "".join(f"{fmt}\t{kind}\t{value}\n" for fmt, kind, value in cases)
        result = subprocess.run([str(binary)], input=text, capture_output=True,
                                text=True, check=True)
        return [line.rsplit("|", 1) for line in result.stdout.splitlines()]

    return run


def check(formatter, cases):
    for (fmt, kind, value), (printed, length) in zip(cases, formatter(cases)):
        python_value = float(value) if kind == "f" else (int(value) if kind == "d" else value)
        # Python has no length modifiers.
        expected = fmt.replace("ll", "").replace("l", "") % python_value
        assert (printed, int(length)) == (expected, len(expected)), (fmt, value)


def test_integers_and_strings(formatter):
    cases = []
    for fmt in ["%lld", "%5lld", "%-5lld|", "%05lld", "%+lld", "% lld", "%llx",
                "%#llx", "%llX", "%llo", "%.3lld", "%llu"]:
        for value in [0, 1, -1, 42, -42, 123456789, 2**40, -(2**40)]:
            if "u" in fmt or "x" in fmt or "X" in fmt or "o" in fmt:
                value = abs(value)
            if "#" in fmt and value == 0:
                continue  # C prints "0"; Python "0x0"
            cases.append((fmt, "d", str(value)))
    for fmt in ["%s", "%10s", "%-10s|", "%.3s", "[%5.2s]"]:
        for value in ["", "abc", "hello world"]:
            cases.append((fmt, "s", value))
    check(formatter, cases)


def test_floats_round_like_printf(formatter):
    rng = random.Random(7)
    values = [0.0, -0.0, 1.0, -1.5, 0.5, 2.5, 1e-7, 123456.789, 1e30, -3.4e38,
              1.17549435e-38, 0.1, 9.9999999, 999999.5]
    for _ in range(400):
        bits = rng.getrandbits(32)
        value = struct.unpack("<f", struct.pack("<I", bits))[0]
        if value == value and abs(value) != float("inf"):
            values.append(value)
    for _ in range(100):
        values.append(struct.unpack("<f", struct.pack("<f", rng.uniform(-10, 10)))[0])
    cases = [(fmt, "f", repr(v)) for v in values for fmt in ["%.9g", "%g", "%e", "%.3e"]]
    cases += [(fmt, "f", repr(v)) for v in values if abs(v) < 1e15
              for fmt in ["%f", "%.2f", "%10.3f", "%-12.1f|", "%+.0f", "%#.0f"]]
    check(formatter, cases)


def test_truncation_returns_the_full_length(formatter):
    # The driver formats into a 6-byte buffer.
    (printed, length), = formatter([("%lld", "t", "1234567890")])
    assert (printed, length) == ("12345", "10")
