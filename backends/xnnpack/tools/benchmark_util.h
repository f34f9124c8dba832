#pragma once

// What the host kernels' benchmarks (f32_dwconv_benchmark,
// f32_inverted_residual_benchmark) share: their options, and timing in this
// thread's CPU time (a shared machine's waits do not count), best of
// several rounds, optionally with cold caches.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <ctime>
#include <vector>

namespace executorch {
namespace backends {
namespace xnnpack {
namespace bench {

// `--quick`: one small round (the smoke tests check that it reports);
// `--cold`: each call starts with caches holding none of its data.
struct Options {
  bool quick = false;
  bool cold = false;
  size_t rounds = 7;
};

inline Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    options.quick = options.quick || std::strcmp(argv[i], "--quick") == 0;
    options.cold = options.cold || std::strcmp(argv[i], "--cold") == 0;
  }
  options.rounds = options.quick ? 1 : 7;
  return options;
}

inline double thread_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// Writing this evicts a call's data from every cache level (--cold).
inline std::vector<float>& eviction_buffer() {
  static std::vector<float> buffer(16 << 20, 0.0f);
  return buffer;
}

// The best of `rounds` of `calls` calls of f, in seconds per call; `cold`:
// at most 20 calls a round, each timed alone after evicting the caches.
template <typename F>
double best_of(size_t rounds, size_t calls, bool cold, F&& f) {
  f();
  if (cold) {
    calls = std::min<size_t>(calls, 20);
  }
  double best = 1e30;
  for (size_t r = 0; r < rounds; ++r) {
    double seconds = 0;
    const double start = thread_seconds();
    for (size_t i = 0; i < calls; ++i) {
      if (cold) {
        std::vector<float>& buffer = eviction_buffer();
        for (size_t j = 0; j < buffer.size(); j += 16) {
          buffer[j] += 1.0f;
        }
        const double call_start = thread_seconds();
        f();
        seconds += thread_seconds() - call_start;
      } else {
        f();
      }
    }
    if (!cold) {
      seconds = thread_seconds() - start;
    }
    best = std::min(best, seconds / double(calls));
  }
  return best;
}

} // namespace bench
} // namespace xnnpack
} // namespace backends
} // namespace executorch
