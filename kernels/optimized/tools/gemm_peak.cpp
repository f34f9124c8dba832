// optimized_gemm_peak: how close the optimized GEMM (blas/gemm.h) comes to
// this CPU's peak float32 FMA rate on one thread.
//
//   optimized_gemm_peak [size | MxNxK ...]   (default sizes 256 512 1024)
//
// The peak is computed from the instruction set the kernels picked
// (simd/isa.h) and the clock measured here:
//   clock: a chain of dependent register-to-register integer adds, one per
//     cycle on every x86-64 and AArch64 core, timed in this thread's CPU
//     time (best of 5). Not adds of an immediate: Intel's cores since Golden
//     Cove fold those at rename, several per cycle (an Emerald Rapids read
//     10.8 GHz);
//   peak = clock x 2 FMA pipes x lanes x 2 flops, lanes = 16 (AVX-512), 8
//     (AVX2) or 4 (SSE2/NEON). Two FMA pipes is Intel since Haswell and AMD
//     since Zen 2; AMD Zen 4 runs a 512-bit FMA as two 256-bit halves, so
//     an AMD CPU with AVX-512 counts 8 lanes.
// Each GEMM is C = A * B on row-major matrices, square (size) or M x K
// times K x N (MxNxK: a transformer's linear, e.g. 128x1536x384), best of
// several runs in thread CPU time (the pool has one thread: the caller).
// Prints one line per shape and the fraction of peak. A benchmark, not a
// test; benchmarks/kernel_benchmark.py runs it.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <vector>

#include <executorch/extension/threadpool/threadpool.h>
#include <executorch/kernels/optimized/blas/gemm.h>
#include <executorch/kernels/optimized/simd/isa.h>

namespace opt = executorch::kernels::optimized;

namespace {

// This thread's CPU time: a shared machine preempts the timed loops, and
// wall time would count the waits.
double thread_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Cycles per second from a dependent add chain (4 adds per iteration).
double measure_clock_hz() {
  const uint64_t iterations = 50'000'000;
  double best = 1e30;
  for (int run = 0; run < 5; ++run) {
    uint64_t value = 0;
    uint64_t count = iterations;
    const uint64_t one = 1;
    const double start = thread_seconds();
#if defined(__x86_64__)
    asm volatile(
        "1:\n\t"
        "addq %2, %0\n\t"
        "addq %2, %0\n\t"
        "addq %2, %0\n\t"
        "addq %2, %0\n\t"
        "decq %1\n\t"
        "jnz 1b\n\t"
        : "+r"(value), "+r"(count)
        : "r"(one)
        : "cc");
#elif defined(__aarch64__)
    asm volatile(
        "1:\n\t"
        "add %0, %0, %2\n\t"
        "add %0, %0, %2\n\t"
        "add %0, %0, %2\n\t"
        "add %0, %0, %2\n\t"
        "subs %1, %1, #1\n\t"
        "b.ne 1b\n\t"
        : "+r"(value), "+r"(count)
        : "r"(one)
        : "cc");
#else
    return 0.0;
#endif
    best = std::min(best, thread_seconds() - start);
  }
  return 4.0 * static_cast<double>(iterations) / best;
}

bool is_amd() {
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  asm volatile("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(0));
  char vendor[13] = {};
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  return std::strcmp(vendor, "AuthenticAMD") == 0;
#else
  return false;
#endif
}

int fma_lanes(opt::Isa isa) {
  switch (isa) {
    case opt::Isa::kAvx512:
      return is_amd() ? 8 : 16;
    case opt::Isa::kAvx2:
      return 8;
    case opt::Isa::kPortable:
      return 4;
  }
  return 4;
}

} // namespace

int main(int argc, char** argv) {
  struct Shape {
    int64_t m, n, k;
  };
  std::vector<Shape> shapes;
  for (int i = 1; i < argc; ++i) {
    long long m = 0, n = 0, k = 0;
    if (std::sscanf(argv[i], "%lldx%lldx%lld", &m, &n, &k) != 3) {
      m = n = k = std::atoll(argv[i]);
    }
    if (m <= 0 || n <= 0 || k <= 0) {
      std::fprintf(stderr, "bad shape '%s': a size or MxNxK\n", argv[i]);
      return 2;
    }
    shapes.push_back({m, n, k});
  }
  if (shapes.empty()) {
    shapes = {{256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024}};
  }
  executorch::extension::threadpool::get_threadpool()->_unsafe_reset_threadpool(
      1);
  const opt::Isa isa = opt::selected_isa();
  const double clock = measure_clock_hz();
  const int lanes = fma_lanes(isa);
  const double peak = clock * 2.0 * lanes * 2.0;
  std::printf(
      "isa %s; measured clock %.2f GHz; peak %.1f GFLOP/s at 1 thread "
      "(clock x 2 FMA pipes x %d lanes x 2 flops)\n",
      opt::isa_name(isa),
      clock / 1e9,
      peak / 1e9,
      lanes);
  std::mt19937 gen(0);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const Shape& shape : shapes) {
    const int64_t m = shape.m, n = shape.n, k = shape.k;
    std::vector<float> a(m * k), b(k * n), c(m * n);
    for (float& x : a) {
      x = dist(gen);
    }
    for (float& x : b) {
      x = dist(gen);
    }
    const size_t scratch_bytes = opt::sgemm_scratch_bytes(m, n, k);
    std::vector<unsigned char> scratch(scratch_bytes + 64);
    void* aligned =
        scratch.data() +
        (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
    const double flops = 2.0 * m * n * k;
    // Enough runs for ~0.3 s, at least 3.
    double best = 1e30;
    int runs = 0;
    const double begin = thread_seconds();
    while (runs < 3 || thread_seconds() - begin < 0.3) {
      const double start = thread_seconds();
      const bool ok = opt::sgemm(m,
                                 n,
                                 k,
                                 {a.data(), k, 1},
                                 opt::GemmB::matrix_of({b.data(), n, 1}),
                                 c.data(),
                                 n,
                                 opt::GemmEpilogue{},
                                 aligned,
                                 scratch_bytes);
      if (!ok) {
        std::fprintf(stderr,
                     "sgemm refused %lldx%lldx%lld\n",
                     static_cast<long long>(m),
                     static_cast<long long>(n),
                     static_cast<long long>(k));
        return 1;
      }
      best = std::min(best, thread_seconds() - start);
      ++runs;
    }
    std::printf("gemm %lldx%lldx%lld: %.2f ms, %.1f GFLOP/s, %.0f%% of peak\n",
                static_cast<long long>(m),
                static_cast<long long>(n),
                static_cast<long long>(k),
                best * 1e3,
                flops / best / 1e9,
                100.0 * flops / best / peak);
  }
  return 0;
}
