// xnnpack_gemm_compare: XNNPACK's fully connected operator (Debian's 2022
// build, weights packed once when the operator is created) against the
// optimized kernels' packed GEMM (kernels/optimized/blas, packing B on
// every call) on the shapes of transformer linears, at one thread, so the
// XNNPACK delegate can use whichever is faster (backends/xnnpack/README.md).
//
//   xnnpack_gemm_compare [--repeat N] [M,K,N ...]
//
// Default shapes: ViT-tiny's linears (197 tokens, d=192, MLP 768) and
// MiniLM-L6's (128 tokens, d=384, MLP 1536). Each time is the best of N
// runs in this thread's CPU time (a shared machine preempts the loops;
// wall time would count the waits). A benchmark, not a test: the ctest
// smoke run only checks that it runs and that both agree.

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

#include <executorch/extension/threadpool/threadpool_guard.h>
#include <executorch/kernels/optimized/blas/gemm.h>
#include <executorch/kernels/optimized/simd/isa.h>

namespace opt = executorch::kernels::optimized;

namespace {

double thread_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

template <typename F>
double best_seconds(int repeat, F f) {
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < repeat; ++r) {
    const double start = thread_seconds();
    f();
    best = std::min(best, thread_seconds() - start);
  }
  return best;
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
      xnn_setup_fully_connected_nc_f32(
          op, s.m, a.data(), c_xnn.data(), nullptr) != xnn_status_success) {
    std::fprintf(stderr, "XNNPACK fully connected %ldx%ldx%ld failed\n", s.m,
                 s.k, s.n);
    return false;
  }
  const double xnn = best_seconds(repeat, [&] { xnn_run_operator(op, nullptr); });
  xnn_delete_operator(op);

  executorch::extension::threadpool::NoThreadPoolGuard one_thread;
  const size_t bytes = opt::sgemm_scratch_bytes(s.m, s.n, s.k);
  std::vector<unsigned char> scratch(bytes);
  opt::GemmEpilogue epilogue;
  epilogue.bias = bias.data();
  epilogue.bias_col_stride = 1;
  bool ok = true;
  const double ours = best_seconds(repeat, [&] {
    ok = ok &&
        opt::sgemm(s.m,
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
  });
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
  std::vector<Shape> shapes;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else {
      Shape s{};
      if (std::sscanf(argv[i], "%ld,%ld,%ld", &s.m, &s.k, &s.n) != 3 ||
          s.m <= 0 || s.k <= 0 || s.n <= 0) {
        std::fprintf(stderr,
                     "usage: %s [--repeat N] [M,K,N ...] (got '%s')\n",
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
  std::printf("one thread, best of %d runs in thread CPU time; ours: %s\n",
              repeat,
              opt::simd().isa_name);
  bool ok = true;
  for (const Shape& s : shapes) {
    ok = compare(s, repeat) && ok;
  }
  return ok ? 0 : 1;
}
