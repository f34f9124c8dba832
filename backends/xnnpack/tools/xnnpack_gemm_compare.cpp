// xnnpack_gemm_compare: XNNPACK's fully connected operator (Debian's 2022
// build, weights packed once when the operator is created) against the
// optimized kernels' packed GEMM (kernels/optimized/blas, packing B on
// every call) on the shapes of transformer linears, so the XNNPACK
// delegate can use whichever is faster (backends/xnnpack/README.md).
//
//   xnnpack_gemm_compare [--repeat N] [--threads T] [M,K,N ...]
//
// Default shapes: ViT-tiny's linears (197 tokens, d=192, MLP 768) and
// MiniLM-L6's (128 tokens, d=384, MLP 1536). The two run alternately, N
// times each, and each time is the best of its N runs. At one thread it
// is this thread's CPU time (a shared machine preempts the loops; wall
// time would count the waits). At T > 1 threads (the process-wide pool,
// which both use) it is wall time: the process's CPU time misses what
// the other threads ran in their current time slice (Linux adds it at the
// next tick or switch), far too coarse for a product of ~1 ms; preemption
// only lengthens a run, so on a loaded machine the best of many runs is
// an upper bound of the quiet time.
// A benchmark, not a test: the ctest smoke run only checks that it runs
// and that both agree.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <random>
#include <vector>

#include <xnnpack.h>

#include <executorch/extension/threadpool/threadpool.h>
#include <executorch/kernels/optimized/blas/gemm.h>
#include <executorch/kernels/optimized/simd/isa.h>

namespace opt = executorch::kernels::optimized;

namespace {

// This thread's CPU time (one thread) or wall time (more).
clockid_t timer = CLOCK_THREAD_CPUTIME_ID;

double timer_seconds() {
  timespec t;
  clock_gettime(timer, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

template <typename F>
double seconds(F f) {
  const double start = timer_seconds();
  f();
  return timer_seconds() - start;
}

struct Shape {
  long m, k, n;
};

// Returns false when the two results disagree or XNNPACK fails.
bool compare(const Shape& s, int repeat) {
  std::mt19937 rng(0);
  std::normal_distribution<float> normal;
  std::vector<float> a(s.m * s.k), w(s.n * s.k), bias(s.n);
  for (auto* v : {&a, &w, &bias}) {
    for (float& x : *v) {
      x = normal(rng);
    }
  }
  std::vector<float> c_xnn(s.m * s.n + 16), c_opt(s.m * s.n);
  // A linear's weight is [N, K]; XNNPACK takes it as stored.
  xnn_operator_t op = nullptr;
  pthreadpool_t pool = executorch::extension::threadpool::get_pthreadpool();
  if (xnn_create_fully_connected_nc_f32(s.k,
                                        s.n,
                                        s.k,
                                        s.n,
                                        w.data(),
                                        bias.data(),
                                        -INFINITY,
                                        INFINITY,
                                        0,
                                        &op) != xnn_status_success ||
      xnn_setup_fully_connected_nc_f32(op, s.m, a.data(), c_xnn.data(), pool) !=
          xnn_status_success) {
    std::fprintf(
        stderr, "XNNPACK fully connected %ldx%ldx%ld failed\n", s.m, s.k, s.n);
    xnn_delete_operator(op);
    return false;
  }
  const size_t bytes = opt::sgemm_scratch_bytes(s.m, s.n, s.k);
  std::vector<unsigned char> scratch(bytes);
  opt::GemmEpilogue epilogue;
  epilogue.bias = bias.data();
  epilogue.bias_col_stride = 1;
  bool ok = true;
  double xnn = std::numeric_limits<double>::infinity();
  double ours = xnn;
  for (int r = 0; r < repeat; ++r) {
    xnn = std::min(xnn, seconds([&] { xnn_run_operator(op, pool); }));
    ours = std::min(ours, seconds([&] {
                      ok = ok && opt::sgemm(
                                     s.m,
                                     s.n,
                                     s.k,
                                     opt::MatrixView{a.data(), s.k, 1},
                                     // B = W^T: element (k, n) at w[n * K + k].
                                     opt::GemmB::matrix_of({w.data(), 1, s.k}),
                                     c_opt.data(),
                                     s.n,
                                     epilogue,
                                     scratch.data(),
                                     bytes);
                    }));
  }
  xnn_delete_operator(op);
  double max_error = 0;
  for (long i = 0; i < s.m * s.n; ++i) {
    max_error = std::max(max_error,
                         static_cast<double>(std::fabs(c_xnn[i] - c_opt[i])));
  }
  const double gflop = 2.0 * s.m * s.k * s.n * 1e-9;
  std::printf(
      "%5ld x %5ld x %5ld: XNNPACK %7.3f ms %6.1f GFLOP/s | ours %7.3f ms "
      "%6.1f GFLOP/s | ours/XNNPACK time %.2f | max |diff| %.1e\n",
      s.m,
      s.k,
      s.n,
      xnn * 1e3,
      gflop / xnn,
      ours * 1e3,
      gflop / ours,
      ours / xnn,
      max_error);
  return ok && max_error < 1e-3 * std::sqrt(static_cast<double>(s.k));
}

} // namespace

int main(int argc, char** argv) {
  int repeat = 20;
  unsigned threads = 1;
  std::vector<Shape> shapes;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = static_cast<unsigned>(std::max(1, std::atoi(argv[++i])));
    } else {
      Shape s{};
      if (std::sscanf(argv[i], "%ld,%ld,%ld", &s.m, &s.k, &s.n) != 3 ||
          s.m <= 0 || s.k <= 0 || s.n <= 0) {
        std::fprintf(
            stderr,
            "usage: %s [--repeat N] [--threads T] [M,K,N ...] (got '%s')\n",
            argv[0],
            argv[i]);
        return 2;
      }
      shapes.push_back(s);
    }
  }
  if (shapes.empty()) {
    shapes = {{197, 192, 576},
              {197, 192, 192},
              {197, 192, 768},
              {197, 768, 192},
              {128, 384, 1152},
              {128, 384, 384},
              {128, 384, 1536},
              {128, 1536, 384}};
  }
  if (xnn_initialize(nullptr) != xnn_status_success) {
    std::fprintf(stderr, "XNNPACK does not initialize on this CPU\n");
    return 1;
  }
  if (!executorch::extension::threadpool::get_threadpool()
           ->_unsafe_reset_threadpool(threads)) {
    std::fprintf(stderr, "cannot start a pool of %u threads\n", threads);
    return 1;
  }
  if (threads > 1) {
    timer = CLOCK_MONOTONIC;
  }
  std::printf(
      "%u thread(s), interleaved, best of %d runs in %s time; "
      "ours: %s\n",
      threads,
      repeat,
      threads > 1 ? "wall" : "thread CPU",
      opt::simd().isa_name);
  bool ok = true;
  for (const Shape& s : shapes) {
    ok = compare(s, repeat) && ok;
  }
  return ok ? 0 : 1;
}
