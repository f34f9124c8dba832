// Every optimized kernel against its portable counterpart on the same
// inputs: odd sizes (not multiples of any vector width), broadcasting,
// non-default dim orders, empty tensors, sizes large enough to thread, for
// each instruction set this CPU runs and for 1 and 2 threads. The portable
// kernels are the reference (test_kernels_against_eager.py and the op
// sweep hold them to eager). Tolerance for float32: |opt - ref| <=
// 1e-5 + 1e-4 * |ref| (the GEMM sums in another order, exp/tanh/erf are
// polynomial approximations); products sum K terms in another order and
// cancel, so matrix products and convolutions allow atol 1e-3 on results
// of magnitude up to ~100.

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include <executorch/extension/threadpool/threadpool.h>
#include <executorch/kernels/optimized/cpu/gemm_ops.h>
#include <executorch/kernels/optimized/cpu/winograd.h>
#include <executorch/kernels/optimized/simd/isa.h>
#include <executorch/kernels/portable/test/test_tensor.h>
#include <optimized/optimized_native_cpu_ops_lib/NativeFunctions.h>
#include <portable/portable_ops/NativeFunctions.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;
namespace opt = executorch::kernels::optimized;
using ::executorch::aten::IntArrayRef;

namespace {

std::vector<float> random_values(size_t n, float lo = -3.0f, float hi = 3.0f) {
  static std::mt19937 gen(1234);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) {
    x = dist(gen);
  }
  return v;
}

size_t numel(const std::vector<int32_t>& sizes) {
  size_t n = 1;
  for (int32_t s : sizes) {
    n *= static_cast<size_t>(s);
  }
  return n;
}

// A float tensor of random values; `dim_order` empty for the default.
std::unique_ptr<TestTensor> rand_tensor(std::vector<int32_t> sizes,
                                        std::vector<uint8_t> dim_order = {},
                                        float lo = -3.0f,
                                        float hi = 3.0f) {
  const size_t n = numel(sizes);
  return std::make_unique<TestTensor>(ScalarType::Float,
                                      std::move(sizes),
                                      random_values(n, lo, hi),
                                      DYN::STATIC,
                                      std::move(dim_order));
}

using Kernel = std::function<void(
    KernelRuntimeContext&, bool optimized, std::vector<Tensor*>& outs)>;

// Runs `kernel` once optimized and once portable into fresh outs of
// `out_sizes` and compares every out.
void expect_same(const std::vector<std::vector<int32_t>>& out_sizes,
                 const Kernel& kernel,
                 const std::string& what,
                 float atol = 1e-5f) {
  std::vector<std::vector<float>> results[2];
  for (int optimized = 0; optimized < 2; ++optimized) {
    std::vector<std::unique_ptr<TestTensor>> owners;
    std::vector<Tensor*> outs;
    for (const auto& sizes : out_sizes) {
      owners.push_back(std::make_unique<TestTensor>(
          ScalarType::Float, sizes, std::vector<float>(numel(sizes), NAN)));
      outs.push_back(&owners.back()->tensor());
    }
    TempContext ctx;
    kernel(ctx.get(), optimized == 1, outs);
    ASSERT_EQ(ctx.get().failure_state(), Error::Ok)
        << what << (optimized ? " (optimized)" : " (portable)");
    for (auto& owner : owners) {
      results[optimized].push_back(owner->values<float>());
    }
  }
  for (size_t o = 0; o < out_sizes.size(); ++o) {
    const auto& ref = results[0][o];
    const auto& got = results[1][o];
    ASSERT_EQ(ref.size(), got.size()) << what;
    size_t bad = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      // Equal infinities match; so do two NaNs.
      const bool same =
          got[i] == ref[i] || (std::isnan(ref[i]) && std::isnan(got[i]));
      if (!same &&
          !(std::fabs(got[i] - ref[i]) <= atol + 1e-4f * std::fabs(ref[i]))) {
        if (++bad <= 3) {
          ADD_FAILURE() << what << " out " << o << " [" << i << "]: optimized "
                        << got[i] << " portable " << ref[i];
        }
      }
    }
    EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << ref.size()
                       << " elements differ";
  }
}

// (instruction set, threads)
class OptimizedKernels
    : public ::testing::TestWithParam<std::tuple<opt::Isa, int>> {
 protected:
  void SetUp() override {
    const opt::Isa isa = std::get<0>(GetParam());
    if (!opt::isa_available(isa)) {
      GTEST_SKIP() << opt::isa_name(isa) << " is not available here";
    }
    previous_ = opt::selected_isa();
    ASSERT_TRUE(opt::select_isa_for_testing(isa));
    ASSERT_TRUE(executorch::extension::threadpool::get_threadpool()
                    ->_unsafe_reset_threadpool(std::get<1>(GetParam())));
  }
  void TearDown() override {
    opt::select_isa_for_testing(previous_);
    executorch::extension::threadpool::get_threadpool()
        ->_unsafe_reset_threadpool(0);
  }

 private:
  opt::Isa previous_ = opt::Isa::kPortable;
};

TEST_P(OptimizedKernels, BinaryOpsWithBroadcasting) {
  // self, other, self's dim order, out (the broadcast shape)
  using Shapes = std::tuple<std::vector<int32_t>,
                            std::vector<int32_t>,
                            std::vector<uint8_t>,
                            std::vector<int32_t>>;
  const std::vector<Shapes> cases = {
      {{2, 3, 37}, {2, 3, 37}, {}, {2, 3, 37}},
      {{5, 17}, {17}, {}, {5, 17}},
      {{4, 1, 9}, {3, 1}, {}, {4, 3, 9}},
      {{3, 4}, {}, {}, {3, 4}},
      {{0, 5}, {5}, {}, {0, 5}},
      {{1500, 257}, {257}, {}, {1500, 257}},       // threaded
      {{1, 600001}, {1, 600001}, {}, {1, 600001}}, // one long run in pieces
      {{2, 3, 4, 5}, {2, 3, 4, 5}, {0, 2, 3, 1}, {2, 3, 4, 5}},
      {{2, 3, 4, 5}, {3, 1, 1}, {0, 2, 3, 1}, {2, 3, 4, 5}},
  };
  for (const auto& [a_sizes, b_sizes, a_order, out_sizes] : cases) {
    auto a = rand_tensor(a_sizes, a_order);
    auto b = rand_tensor(b_sizes, {}, 0.5f, 3.0f); // no division by ~0
    const std::string shapes = "[" + std::to_string(a_sizes.size()) + "-d x " +
                               std::to_string(b_sizes.size()) + "-d]";
    using Op = std::function<void(
        KernelRuntimeContext&, bool, Tensor&, Tensor&, Tensor&)>;
    const std::vector<std::pair<const char*, Op>> ops = {
        {"add",
         [](auto& c, bool o, Tensor& x, Tensor& y, Tensor& out) {
           o ? native::opt_add_out(c, x, y, 2.0, out)
             : native::add_out(c, x, y, 2.0, out);
         }},
        {"sub",
         [](auto& c, bool o, Tensor& x, Tensor& y, Tensor& out) {
           o ? native::opt_sub_out(c, x, y, 0.5, out)
             : native::sub_out(c, x, y, 0.5, out);
         }},
        {"mul",
         [](auto& c, bool o, Tensor& x, Tensor& y, Tensor& out) {
           o ? native::opt_mul_out(c, x, y, out)
             : native::mul_out(c, x, y, out);
         }},
        {"div",
         [](auto& c, bool o, Tensor& x, Tensor& y, Tensor& out) {
           o ? native::opt_div_out(c, x, y, out)
             : native::div_out(c, x, y, out);
         }},
        {"maximum",
         [](auto& c, bool o, Tensor& x, Tensor& y, Tensor& out) {
           o ? native::opt_maximum_out(c, x, y, out)
             : native::maximum_out(c, x, y, out);
         }},
        {"minimum",
         [](auto& c, bool o, Tensor& x, Tensor& y, Tensor& out) {
           o ? native::opt_minimum_out(c, x, y, out)
             : native::minimum_out(c, x, y, out);
         }},
    };
    for (const auto& [name, op] : ops) {
      expect_same(
          {out_sizes},
          [&](auto& c, bool o, std::vector<Tensor*>& outs) {
            op(c, o, a->tensor(), b->tensor(), *outs[0]);
          },
          std::string(name) + shapes);
    }
  }
}

// mul and div by a Scalar: odd, threaded, empty and 0-dim shapes, a
// channels-last input, float, integer and bool scalars.
TEST_P(OptimizedKernels, BinaryOpsWithAScalar) {
  const std::vector<std::pair<std::vector<int32_t>, std::vector<uint8_t>>>
      cases = {{{2, 3, 37}, {}},
               {{300, 257}, {}},
               {{0, 5}, {}},
               {{}, {}},
               {{2, 3, 4, 5}, {0, 2, 3, 1}}};
  for (const auto& [sizes, order] : cases) {
    auto a = rand_tensor(sizes, order);
    for (const Scalar& scalar :
         {Scalar(0.125), Scalar(int64_t{3}), Scalar(true), Scalar(-7.5)}) {
      const std::string what = std::to_string(sizes.size()) + "-d order " +
                               std::to_string(order.size()) + " by " +
                               std::to_string(scalar.to<double>());
      expect_same(
          {sizes},
          [&](auto& c, bool o, std::vector<Tensor*>& outs) {
            o ? native::opt_mul_scalar_out(c, *a, scalar, *outs[0])
              : native::mul_scalar_out(c, *a, scalar, *outs[0]);
          },
          "mul.Scalar " + what);
      expect_same(
          {sizes},
          [&](auto& c, bool o, std::vector<Tensor*>& outs) {
            o ? native::opt_div_scalar_out(c, *a, scalar, *outs[0])
              : native::div_scalar_out(c, *a, scalar, *outs[0]);
          },
          "div.Scalar " + what);
    }
  }
  // Other dtypes take the portable kernel; a wrong out shape fails.
  TestTensor ints(ScalarType::Int, {3}, std::vector<int32_t>{1, -2, 3});
  TestTensor int_out(ScalarType::Int, {3}, std::vector<int32_t>(3, 0));
  TempContext ctx;
  native::opt_mul_scalar_out(ctx.get(), ints, int64_t{4}, int_out);
  ASSERT_EQ(ctx.get().failure_state(), Error::Ok);
  EXPECT_EQ(int_out.values<int32_t>(), (std::vector<int32_t>{4, -8, 12}));
  auto a = rand_tensor({2, 3});
  TestTensor bad_out(ScalarType::Float, {4}, std::vector<float>(4, 0.0f));
  TempContext bad;
  native::opt_div_scalar_out(bad.get(), *a, 2.0, bad_out);
  EXPECT_EQ(bad.get().failure_state(), Error::InvalidArgument);
}

// A safe softmax's masks: eq.Scalar, logical_not, any along the last dim
// and where, against portable. Odd, empty and 0-dim shapes, -inf and NaN
// entries, all-false rows, a channels-last input and broadcasts the fast
// path leaves to portable.
TEST_P(OptimizedKernels, SafeSoftmaxMasks) {
  const float inf = std::numeric_limits<float>::infinity();
  // Runs `kernel` optimized and portable into outs of `dtype` and `sizes`;
  // the values (bools as 0 / 1) and the context's state must agree.
  auto same = [](ScalarType dtype,
                 const std::vector<int32_t>& sizes,
                 auto kernel,
                 const std::string& what) {
    std::vector<float> got[2];
    Error state[2];
    for (int o = 0; o < 2; ++o) {
      TestTensor out(dtype, sizes, std::vector<float>(numel(sizes), 7.0f));
      TempContext ctx;
      kernel(ctx.get(), o == 1, out.tensor());
      state[o] = ctx.get().failure_state();
      got[o] = out.values<float>();
    }
    EXPECT_EQ(state[1], state[0]) << what;
    ASSERT_EQ(got[1].size(), got[0].size()) << what;
    for (size_t i = 0; i < got[0].size(); ++i) {
      EXPECT_TRUE(got[1][i] == got[0][i] ||
                  (std::isnan(got[1][i]) && std::isnan(got[0][i])))
          << what << " [" << i << "]: " << got[1][i] << " vs " << got[0][i];
    }
  };
  using Case = std::pair<std::vector<int32_t>, std::vector<uint8_t>>;
  for (const auto& [sizes, order] :
       std::vector<Case>{{{3, 5, 7}, {}},
                         {{0, 4}, {}},
                         {{}, {}},
                         {{2, 3, 4, 5}, {0, 2, 3, 1}}}) {
    const std::string what = std::to_string(sizes.size()) + "-d order " +
                             std::to_string(order.size());
    // Scores with whole rows of -inf (rows 1 and 4), stray -inf, a NaN.
    std::vector<float> scores = random_values(numel(sizes));
    const size_t row = sizes.empty() ? 1 : static_cast<size_t>(sizes.back());
    for (size_t i = 0; i < scores.size(); ++i) {
      if (i / row == 1 || i / row == 4 || i % 5 == 3) {
        scores[i] = -inf;
      }
    }
    if (scores.size() > 8) {
      scores[8] = NAN;
      scores[9] = 1.5f;
    }
    TestTensor x(ScalarType::Float, sizes, scores, DYN::STATIC, order);
    for (const Scalar& value :
         {Scalar(-inf), Scalar(1.5), Scalar(int64_t{0})}) {
      same(
          ScalarType::Bool,
          sizes,
          [&](auto& c, bool o, Tensor& out) {
            o ? native::opt_eq_scalar_out(c, x, value, out)
              : native::eq_scalar_out(c, x, value, out);
          },
          "eq.Scalar " + what);
    }
    std::vector<int64_t> bits(numel(sizes));
    for (size_t i = 0; i < bits.size(); ++i) {
      bits[i] = scores[i] == -inf ? 0 : 1;
    }
    TestTensor mask(ScalarType::Bool, sizes, bits, DYN::STATIC, order);
    same(
        ScalarType::Bool,
        sizes,
        [&](auto& c, bool o, Tensor& out) {
          o ? native::opt_logical_not_out(c, mask, out)
            : native::logical_not_out(c, mask, out);
        },
        "logical_not " + what);
    const int64_t rank = static_cast<int64_t>(sizes.size());
    for (const int64_t dim : {int64_t{-1}, rank - 1, int64_t{0}}) {
      for (const bool keepdim : {true, false}) {
        std::vector<int32_t> reduced = sizes;
        if (rank > 0) {
          const size_t d = static_cast<size_t>(dim < 0 ? dim + rank : dim);
          reduced[d] = 1;
          if (!keepdim) {
            reduced.erase(reduced.begin() + static_cast<int64_t>(d));
          }
        }
        same(
            ScalarType::Bool,
            reduced,
            [&](auto& c, bool o, Tensor& out) {
              o ? native::opt_any_out(c, mask, dim, keepdim, out)
                : native::any_out(c, mask, dim, keepdim, out);
            },
            "any dim " + std::to_string(dim) + " keepdim " +
                std::to_string(keepdim) + " " + what);
      }
    }
    // where: a row mask (constant over the last dim), an elementwise one,
    // and one broadcast over the first dim (portable).
    auto zeros = rand_tensor(sizes, order);
    std::vector<std::vector<int32_t>> conditions = {sizes};
    if (rank > 0) {
      conditions.push_back(sizes);
      conditions.back().back() = 1;
      conditions.push_back(sizes);
      conditions.back().front() = 1;
    }
    for (const auto& cond_sizes : conditions) {
      std::vector<int64_t> picks(numel(cond_sizes));
      for (size_t i = 0; i < picks.size(); ++i) {
        picks[i] = i % 3 == 1;
      }
      TestTensor cond(ScalarType::Bool,
                      cond_sizes,
                      picks,
                      DYN::STATIC,
                      cond_sizes == sizes ? order : std::vector<uint8_t>{});
      same(
          ScalarType::Float,
          sizes,
          [&](auto& c, bool o, Tensor& out) {
            o ? native::opt_where_self_out(c, cond, *zeros, x, out)
              : native::where_self_out(c, cond, *zeros, x, out);
          },
          "where " + std::to_string(numel(cond_sizes)) + " picks " + what);
    }
  }
  // Bad arguments fail alike: a dim out of range, a wrong out shape.
  TestTensor mask(ScalarType::Bool, {2, 3}, std::vector<int64_t>(6, 1));
  same(
      ScalarType::Bool,
      {2, 1},
      [&](auto& c, bool o, Tensor& out) {
        o ? native::opt_any_out(c, mask, 5, true, out)
          : native::any_out(c, mask, 5, true, out);
      },
      "any bad dim");
  auto a = rand_tensor({2, 3});
  same(
      ScalarType::Float,
      {4},
      [&](auto& c, bool o, Tensor& out) {
        o ? native::opt_where_self_out(c, mask, *a, *a, out)
          : native::where_self_out(c, mask, *a, *a, out);
      },
      "where bad out");
}

TEST_P(OptimizedKernels, BinaryOpsOnOtherDtypesFallBack) {
  TestTensor a(ScalarType::Int, {2, 3}, std::vector<int32_t>{1, 2, 3, 4, 5, 6});
  TestTensor b(ScalarType::Int, {3}, std::vector<int32_t>{10, 20, 30});
  TestTensor out(ScalarType::Int, {2, 3}, std::vector<int32_t>(6, 0));
  TempContext ctx;
  native::opt_add_out(ctx.get(), a, b, 1, out);
  ASSERT_EQ(ctx.get().failure_state(), Error::Ok);
  EXPECT_EQ(out.values<int32_t>(),
            (std::vector<int32_t>{11, 22, 33, 14, 25, 36}));
}

TEST_P(OptimizedKernels, BinaryOpsReportBadShapes) {
  auto a = rand_tensor({2, 3});
  auto b = rand_tensor({4});
  TestTensor out(ScalarType::Float, {2, 3}, std::vector<float>(6, 0.0f));
  TempContext ctx;
  native::opt_mul_out(ctx.get(), *a, *b, out);
  EXPECT_EQ(ctx.get().failure_state(), Error::InvalidArgument);
}

TEST_P(OptimizedKernels, UnaryOps) {
  using Unary = Tensor& (*)(KernelRuntimeContext&, const Tensor&, Tensor&);
  const std::vector<std::tuple<const char*, Unary, Unary, float, float>> ops = {
      {"relu", native::opt_relu_out, native::relu_out, -3, 3},
      {"sigmoid", native::opt_sigmoid_out, native::sigmoid_out, -20, 20},
      {"tanh", native::opt_tanh_out, native::tanh_out, -10, 10},
      {"silu", native::opt_silu_out, native::silu_out, -20, 20},
      {"exp", native::opt_exp_out, native::exp_out, -80, 80},
      {"hardswish", native::opt_hardswish_out, native::hardswish_out, -5, 5},
      {"neg", native::opt_neg_out, native::neg_out, -3, 3},
      {"abs", native::opt_abs_out, native::abs_out, -3, 3},
      {"sqrt", native::opt_sqrt_out, native::sqrt_out, 0, 100},
      {"rsqrt", native::opt_rsqrt_out, native::rsqrt_out, 0.01f, 100},
      {"reciprocal",
       native::opt_reciprocal_out,
       native::reciprocal_out,
       0.01f,
       100},
  };
  for (const std::vector<int32_t>& sizes :
       {std::vector<int32_t>{3, 1001},
        {3, 100003}, // threaded, math and memory-bound ops alike
        {0, 4},
        {},
        {2, 3, 4, 5}}) {
    for (const auto& [name, optimized, portable, lo, hi] : ops) {
      auto x = rand_tensor(sizes, {}, lo, hi);
      expect_same(
          {sizes},
          [&](auto& c, bool o, std::vector<Tensor*>& outs) {
            (o ? optimized : portable)(c, *x, *outs[0]);
          },
          std::string(name) + " " + std::to_string(numel(sizes)));
    }
  }
  auto x = rand_tensor({7, 129}, {}, -6, 6);
  for (const char* approximate : {"none", "tanh"}) {
    expect_same(
        {{7, 129}},
        [&](auto& c, bool o, std::vector<Tensor*>& outs) {
          o ? native::opt_gelu_out(c, *x, approximate, *outs[0])
            : native::gelu_out(c, *x, approximate, *outs[0]);
        },
        std::string("gelu ") + approximate);
  }
  expect_same(
      {{7, 129}},
      [&](auto& c, bool o, std::vector<Tensor*>& outs) {
        o ? native::opt_hardtanh_out(c, *x, -0.5, 0.7, *outs[0])
          : native::hardtanh_out(c, *x, -0.5, 0.7, *outs[0]);
      },
      "hardtanh");
}

// gelu(approximate="none") against x / 2 * (1 + erf(x / sqrt(2))) in
// double: a sweep of [-12, 12] in steps of 1/64 (1537 values, not a
// multiple of any vector width), the neighbourhood of the erf
// approximation's limit (|x / sqrt(2)| = 3.92), tiny values, zeros, the
// float limits and NaN. Tolerance 1e-6 + 1e-6 |ref|: erf's relative error is
// 3.1e-7 (vec_math.h), which gelu scales by |x| / 2 (2e-7 at 12 is below the
// bound's 1.3e-5).
TEST_P(OptimizedKernels, GeluErfAgainstDoubleErf) {
  std::vector<float> values;
  for (int i = -768; i <= 768; ++i) {
    values.push_back(static_cast<float>(i) / 64.0f);
  }
  const float limit = 3.92f * static_cast<float>(M_SQRT2);
  for (float sign : {-1.0f, 1.0f}) {
    for (float v : {limit,
                    std::nextafter(limit, 0.0f),
                    std::nextafter(limit, 100.0f),
                    5.5f,
                    6.0f,
                    1e-30f,
                    1e-6f,
                    std::numeric_limits<float>::max()}) {
      values.push_back(sign * v);
    }
  }
  values.push_back(0.0f);
  values.push_back(-0.0f);
  values.push_back(NAN);
  TestTensor x(
      ScalarType::Float, {static_cast<int32_t>(values.size())}, values);
  TestTensor out(ScalarType::Float,
                 {static_cast<int32_t>(values.size())},
                 std::vector<float>(values.size(), 0.0f));
  TempContext ctx;
  native::opt_gelu_out(ctx.get(), x.tensor(), "none", out.tensor());
  ASSERT_EQ(ctx.get().failure_state(), Error::Ok);
  const std::vector<float> got = out.values<float>();
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(got[i]));
      continue;
    }
    const double ref = v / 2 * (1 + std::erf(v / M_SQRT2));
    EXPECT_LE(std::fabs(got[i] - ref), 1e-6 + 1e-6 * std::fabs(ref))
        << "gelu(" << values[i] << ") = " << got[i] << ", expected " << ref;
  }
}

// The values of a [rows, cols] matrix stored column-major (dim order
// {1, 0}), as TestTensor takes them (memory order).
std::vector<float> column_major(const std::vector<float>& row_major,
                                int32_t rows,
                                int32_t cols) {
  std::vector<float> v(row_major.size());
  for (int32_t i = 0; i < rows; ++i) {
    for (int32_t j = 0; j < cols; ++j) {
      v[j * rows + i] = row_major[i * cols + j];
    }
  }
  return v;
}

TEST_P(OptimizedKernels, MatrixProducts) {
  // 300 x 260 x 530: a tile of 3 row blocks (144, 144, 12) against each
  // packed B block, 2 column tiles (the second ragged), 2 depth slices.
  // 20 x 300 x 1100: fewer rows than a row block, 3 column blocks of at
  // most 512 that 2 threads split into 4 (N not a multiple of NR). Row
  // counts that are not a multiple of MR (6 or 8) end in a short panel,
  // which the few-rows kernel runs when A's rows are read in place; 1 x
  // 700 x 1100 is an LLM decode step's shape (one row, 2 depth slices).
  for (const auto& [m, k, n] :
       std::vector<std::tuple<int32_t, int32_t, int32_t>>{{1, 1, 1},
                                                          {1, 700, 1100},
                                                          {3, 520, 33},
                                                          {7, 13, 5},
                                                          {64, 300, 70},
                                                          {150, 520, 130},
                                                          {300, 260, 530},
                                                          {20, 300, 1100},
                                                          {3, 0, 4},
                                                          {0, 5, 3}}) {
    const std::string shape =
        std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
    auto a = rand_tensor({m, k});
    const auto b_values = random_values(static_cast<size_t>(k) * n);
    TestTensor b(ScalarType::Float, {k, n}, b_values);
    // The same matrix stored transposed, as a linear's weight is read.
    TestTensor b_t(ScalarType::Float,
                   {k, n},
                   column_major(b_values, k, n),
                   DYN::STATIC,
                   {1, 0});
    expect_same(
        {{m, n}},
        [&](auto& c, bool o, std::vector<Tensor*>& outs) {
          o ? native::opt_mm_out(c, *a, b, *outs[0])
            : native::mm_out(c, *a, b, *outs[0]);
        },
        "mm " + shape,
        1e-3f);
    expect_same(
        {{m, n}},
        [&](auto& c, bool o, std::vector<Tensor*>& outs) {
          // The portable kernel takes the default dim order only.
          o ? native::opt_mm_out(c, *a, b_t, *outs[0])
            : native::mm_out(c, *a, b, *outs[0]);
        },
        "mm (transposed mat2) " + shape,
        1e-3f);
    // mat1 stored transposed: its rows are strided, so the GEMM packs A
    // (contiguous rows are read in place).
    const auto a_values = a->values<float>();
    TestTensor a_t(ScalarType::Float,
                   {m, k},
                   column_major(a_values, m, k),
                   DYN::STATIC,
                   {1, 0});
    expect_same(
        {{m, n}},
        [&](auto& c, bool o, std::vector<Tensor*>& outs) {
          o ? native::opt_mm_out(c, a_t, b, *outs[0])
            : native::mm_out(c, *a, b, *outs[0]);
        },
        "mm (transposed mat1) " + shape,
        1e-3f);
    for (const std::vector<int32_t>& bias_sizes :
         {std::vector<int32_t>{n}, {m, n}, {1, n}, {m, 1}, {}}) {
      auto bias = rand_tensor(bias_sizes);
      expect_same(
          {{m, n}},
          [&](auto& c, bool o, std::vector<Tensor*>& outs) {
            o ? native::opt_addmm_out(c, *bias, *a, b_t, 0.5, 2.0, *outs[0])
              : native::addmm_out(c, *bias, *a, b, 0.5, 2.0, *outs[0]);
          },
          "addmm " + shape + " bias " + std::to_string(bias_sizes.size()) +
              "-d",
          1e-3f);
    }
  }
  for (const auto& [batch, m, k, n] :
       std::vector<std::tuple<int32_t, int32_t, int32_t, int32_t>>{
           {12, 33, 17, 29},
           {3, 128, 64, 128},
           {3, 197, 64, 197}, // 2 threads split each batch's rows
           {5, 7, 300, 1000}, // ... into 2 blocks of MR and a ragged one
           {1, 5, 7, 3},
           {0, 2, 2, 2}}) {
    auto a = rand_tensor({batch, m, k});
    auto b = rand_tensor({batch, k, n});
    expect_same(
        {{batch, m, n}},
        [&](auto& c, bool o, std::vector<Tensor*>& outs) {
          o ? native::opt_bmm_out(c, *a, *b, *outs[0])
            : native::bmm_out(c, *a, *b, *outs[0]);
        },
        "bmm " + std::to_string(batch),
        1e-3f);
  }
}

// batch_matmul_float with a [m, n] bias, alpha and a clamp, on 3 batches
// whose rows 2 threads split (each block's bias rows follow it), against
// a product in double.
TEST_P(OptimizedKernels, BatchMatmulWithEpilogue) {
  const int64_t batches = 3, m = 45, k = 300, n = 200;
  const auto a = random_values(batches * m * k);
  const auto b = random_values(batches * k * n);
  const auto bias = random_values(m * n);
  opt::GemmEpilogue epilogue;
  epilogue.alpha = 0.5f;
  epilogue.bias = bias.data();
  epilogue.bias_row_stride = n;
  epilogue.bias_col_stride = 1;
  epilogue.bias_scale = 2.0f;
  epilogue.min = -40.0f;
  epilogue.max = 40.0f;
  std::vector<float> c(batches * m * n, NAN);
  ASSERT_TRUE(opt::batch_matmul_float(batches,
                                      m,
                                      n,
                                      k,
                                      opt::MatrixView{a.data(), k, 1},
                                      m * k,
                                      opt::MatrixView{b.data(), n, 1},
                                      k * n,
                                      c.data(),
                                      epilogue));
  size_t bad = 0;
  for (int64_t batch = 0; batch < batches; ++batch) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const float* a_row = a.data() + (batch * m + i) * k;
        const float* b_col = b.data() + batch * k * n + j;
        double sum = 0.0;
        for (int64_t p = 0; p < k; ++p) {
          sum += static_cast<double>(a_row[p]) * b_col[p * n];
        }
        const double want =
            std::clamp(0.5 * sum + 2.0 * bias[i * n + j], -40.0, 40.0);
        const float got = c[(batch * m + i) * n + j];
        if (!(std::fabs(got - want) <= 1e-3 + 1e-4 * std::fabs(want)) &&
            ++bad <= 3) {
          ADD_FAILURE() << "batch " << batch << " [" << i << ", " << j
                        << "]: " << got << ", want " << want;
        }
      }
    }
  }
  EXPECT_EQ(bad, 0u);
}

TEST_P(OptimizedKernels, MatrixProductsReportBadShapes) {
  auto a = rand_tensor({2, 3});
  auto b = rand_tensor({4, 5});
  TestTensor out(ScalarType::Float, {2, 5}, std::vector<float>(10, 0.0f));
  TempContext ctx;
  native::opt_mm_out(ctx.get(), *a, *b, out);
  EXPECT_EQ(ctx.get().failure_state(), Error::InvalidArgument);
}

TEST_P(OptimizedKernels, SoftmaxAlongEveryDim) {
  for (const auto& [sizes, dim] :
       std::vector<std::pair<std::vector<int32_t>, int64_t>>{{{4, 37}, -1},
                                                             {{3, 37, 70}, 1},
                                                             {{2, 5, 3}, 0},
                                                             {{64, 1000}, 1},
                                                             {{3, 200, 130}, 2},
                                                             {{0, 6}, 1},
                                                             {{}, 0}}) {
    auto x = rand_tensor(sizes, {}, -20, 20);
    for (const bool log : {false, true}) {
      expect_same(
          {sizes},
          [&](auto& c, bool o, std::vector<Tensor*>& outs) {
            if (log) {
              o ? native::opt_log_softmax_out(c, *x, dim, false, *outs[0])
                : native::log_softmax_out(c, *x, dim, false, *outs[0]);
            } else {
              o ? native::opt_softmax_out(c, *x, dim, false, *outs[0])
                : native::softmax_out(c, *x, dim, false, *outs[0]);
            }
          },
          std::string(log ? "log_softmax" : "softmax") + " dim " +
              std::to_string(dim) + " of " + std::to_string(sizes.size()) +
              "-d");
    }
  }
}

// Rows whose exp underflows (gaps to the max below -87), masked (-inf)
// entries, fully masked rows, NaN and +inf, and rows far below zero (a
// loop tail's padding must not count), at lengths around the vector
// widths, along the last dim (one row at a time) and a middle dim (lanes).
TEST_P(OptimizedKernels, SoftmaxOfSpecialValues) {
  const float inf = INFINITY;
  for (const int32_t n : {1, 5, 16, 19, 37, 40}) {
    std::vector<std::vector<float>> rows = {random_values(n, -200.0f, 0.0f),
                                            random_values(n, -1e30f, -1e29f),
                                            std::vector<float>(n, -inf),
                                            random_values(n, -3.0f, 3.0f),
                                            random_values(n, -3.0f, 3.0f),
                                            random_values(n, -3.0f, 3.0f)};
    rows[3][n / 2] = -inf;
    rows[4][n - 1] = NAN;
    rows[5][0] = inf;
    const int32_t count = static_cast<int32_t>(rows.size());
    // Each row as a row of [count, n], and as a lane of [1, n, count].
    std::vector<float> by_rows, by_lanes(count * n);
    for (int32_t r = 0; r < count; ++r) {
      by_rows.insert(by_rows.end(), rows[r].begin(), rows[r].end());
      for (int32_t i = 0; i < n; ++i) {
        by_lanes[i * count + r] = rows[r][i];
      }
    }
    for (const bool lanes : {false, true}) {
      const std::vector<int32_t> sizes = lanes
                                             ? std::vector<int32_t>{1, n, count}
                                             : std::vector<int32_t>{count, n};
      const int64_t dim = 1;
      TestTensor x(ScalarType::Float, sizes, lanes ? by_lanes : by_rows);
      for (const bool log : {false, true}) {
        expect_same(
            {sizes},
            [&](auto& c, bool o, std::vector<Tensor*>& outs) {
              if (log) {
                o ? native::opt_log_softmax_out(
                        c, x.tensor(), dim, false, *outs[0])
                  : native::log_softmax_out(
                        c, x.tensor(), dim, false, *outs[0]);
              } else {
                o ? native::opt_softmax_out(c, x.tensor(), dim, false, *outs[0])
                  : native::softmax_out(c, x.tensor(), dim, false, *outs[0]);
              }
            },
            std::string(log ? "log_softmax" : "softmax") + " of special " +
                "values, length " + std::to_string(n) +
                (lanes ? ", lanes" : ", rows"));
      }
    }
  }
}

TEST_P(OptimizedKernels, LayerNorm) {
  for (const auto& [sizes, normalized] :
       std::vector<std::pair<std::vector<int32_t>, std::vector<int64_t>>>{
           {{4, 7, 129}, {129}},
           {{4, 7, 129}, {7, 129}},
           {{700, 384}, {384}}, // threaded
           {{0, 8}, {8}}}) {
    auto x = rand_tensor(sizes);
    int32_t lane = 1;
    std::vector<int32_t> stats = sizes;
    for (size_t i = 0; i < normalized.size(); ++i) {
      lane *= static_cast<int32_t>(normalized[i]);
      stats[sizes.size() - 1 - i] = 1;
    }
    auto weight = rand_tensor({lane});
    auto bias = rand_tensor({lane});
    for (const bool affine : {true, false}) {
      std::optional<Tensor> w, b;
      if (affine) {
        w = weight->tensor();
        b = bias->tensor();
      }
      const IntArrayRef shape(normalized.data(), normalized.size());
      expect_same(
          {sizes, stats, stats},
          [&](auto& c, bool o, std::vector<Tensor*>& outs) {
            (o ? native::opt_native_layer_norm_out
               : native::native_layer_norm_out)(
                c, *x, shape, w, b, 1e-5, *outs[0], *outs[1], *outs[2]);
          },
          "layer_norm lane " + std::to_string(lane) +
              (affine ? " affine" : ""));
    }
  }
}

// A row of equal values normalizes to exactly 0 (the output is the bias), as
// in PyTorch: its mean must come out exactly, or 1 / sqrt(eps) amplifies the
// ulp it is off by (a sweep's padded rows did read ~4e-5).
TEST_P(OptimizedKernels, LayerNormOfAConstantRowIsTheBias) {
  for (const int32_t n : {7, 64, 129, 384}) {
    for (const float value : {0.1f, 1.7f, -3.3f, 1234.567f}) {
      TestTensor x(ScalarType::Float, {3, n}, std::vector<float>(3 * n, value));
      auto weight = rand_tensor({n});
      auto bias = rand_tensor({n});
      TestTensor out(ScalarType::Float, {3, n}, std::vector<float>(3 * n));
      TestTensor mean(ScalarType::Float, {3, 1}, std::vector<float>(3));
      TestTensor rstd(ScalarType::Float, {3, 1}, std::vector<float>(3));
      const int64_t normalized[] = {n};
      TempContext ctx;
      native::opt_native_layer_norm_out(ctx.get(),
                                        x.tensor(),
                                        IntArrayRef(normalized, 1),
                                        weight->tensor(),
                                        bias->tensor(),
                                        1e-5,
                                        out.tensor(),
                                        mean.tensor(),
                                        rstd.tensor());
      ASSERT_EQ(ctx.get().failure_state(), Error::Ok);
      const std::vector<float> b = bias->values<float>();
      const std::vector<float> got = out.values<float>();
      for (int32_t i = 0; i < 3 * n; ++i) {
        ASSERT_EQ(got[i], b[i % n]) << "n " << n << " value " << value;
      }
      EXPECT_EQ(mean.values<float>(), std::vector<float>(3, value));
    }
  }
}

struct ConvCase {
  const char* name;
  std::vector<int32_t> input, weight;
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups;
  bool bias;
  std::vector<uint8_t> input_order;
};

// Runs `cc` through the optimized and the portable convolution and
// compares them (expect_same, with `atol`).
void expect_same_convolution(const ConvCase& cc, float atol) {
  auto x = rand_tensor(cc.input, cc.input_order);
  // Portable takes any dim order too; give it the same logical input.
  auto w = rand_tensor(cc.weight);
  auto b = rand_tensor({cc.weight[0]});
  std::optional<Tensor> bias;
  if (cc.bias) {
    bias = b->tensor();
  }
  const bool is_1d = cc.input.size() == 3;
  std::vector<int32_t> out_sizes = {cc.input[0], cc.weight[0]};
  for (size_t d = 2; d < cc.input.size(); ++d) {
    const size_t p = is_1d ? 0 : d - 2;
    const int64_t s = cc.stride.size() == 1 ? cc.stride[0] : cc.stride[p];
    const int64_t pad = cc.padding.size() == 1 ? cc.padding[0] : cc.padding[p];
    const int64_t dil =
        cc.dilation.size() == 1 ? cc.dilation[0] : cc.dilation[p];
    out_sizes.push_back(static_cast<int32_t>(
        (cc.input[d] + 2 * pad - dil * (cc.weight[d] - 1) - 1) / s + 1));
  }
  const IntArrayRef stride(cc.stride.data(), cc.stride.size());
  const IntArrayRef padding(cc.padding.data(), cc.padding.size());
  const IntArrayRef dilation(cc.dilation.data(), cc.dilation.size());
  const std::vector<int64_t> no_padding = {0};
  expect_same(
      {out_sizes},
      [&](auto& c, bool o, std::vector<Tensor*>& outs) {
        (o ? native::opt_convolution_out : native::convolution_out)(
            c,
            *x,
            *w,
            bias,
            stride,
            padding,
            dilation,
            false,
            IntArrayRef(no_padding.data(), 1),
            cc.groups,
            *outs[0]);
      },
      std::string("convolution ") + cc.name,
      1e-3f);
}

TEST_P(OptimizedKernels, Convolution) {
  const std::vector<ConvCase> cases = {
      {"3x3 pad 1", {2, 3, 13, 11}, {5, 3, 3, 3}, {1}, {1}, {1}, 1, true, {}},
      {"stride 2 dilation 2",
       {1, 4, 17, 19},
       {6, 4, 3, 3},
       {2, 2},
       {0, 0},
       {2, 2},
       1,
       true,
       {}},
      {"1x1", {2, 16, 7, 9}, {24, 16, 1, 1}, {1}, {0}, {1}, 1, false, {}},
      {"groups 2", {1, 4, 9, 9}, {6, 2, 3, 3}, {1}, {1}, {1}, 2, true, {}},
      {"depthwise", {2, 8, 15, 13}, {8, 1, 3, 3}, {1}, {1}, {1}, 8, true, {}},
      {"depthwise stride 2",
       {1, 8, 16, 15},
       {8, 1, 3, 3},
       {2},
       {1},
       {1},
       8,
       false,
       {}},
      {"depthwise multiplier 2 5x5",
       {1, 3, 12, 12},
       {6, 1, 5, 5},
       {1},
       {2},
       {1},
       3,
       true,
       {}},
      {"depthwise dilation 2",
       {1, 4, 10, 11},
       {4, 1, 3, 3},
       {1},
       {2},
       {2},
       4,
       true,
       {}},
      {"channels-last input",
       {2, 3, 8, 8},
       {4, 3, 3, 3},
       {1},
       {1},
       {1},
       1,
       true,
       {0, 2, 3, 1}},
      {"1-d", {2, 3, 20}, {4, 3, 5}, {2}, {1}, {1}, 1, true, {}},
      {"large", {1, 32, 28, 28}, {64, 32, 3, 3}, {1}, {1}, {1}, 1, true, {}},
      // GEMM blocking edges: 2 row tiles (150 > 144 outputs), 2 column
      // tiles (690 pixels), 2 depth slices (480 > 256), output rows (30)
      // that end inside the packed panels. (A 3x4 kernel: a 3x3 one of
      // this size takes Winograd.)
      {"tiles",
       {1, 40, 23, 29},
       {150, 40, 3, 4},
       {1},
       {1, 2},
       {1},
       1,
       true,
       {}},
      // 1x1 over a channels-last input: a plain product with strided pixels.
      {"1x1 channels-last",
       {2, 16, 5, 7},
       {8, 16, 1, 1},
       {1},
       {0},
       {1},
       1,
       true,
       {0, 2, 3, 1}},
      {"1x1 stride 2",
       {1, 8, 9, 10},
       {12, 8, 1, 1},
       {2},
       {0},
       {1},
       1,
       true,
       {}},
      {"1-d 1x1", {2, 6, 33}, {5, 6, 1}, {1}, {0}, {1}, 1, false, {}},
      {"7x7 stride 2 pad 3",
       {1, 3, 37, 35},
       {8, 3, 7, 7},
       {2},
       {3},
       {1},
       1,
       true,
       {}},
      {"depthwise channels-last stride 2 pad 2",
       {2, 5, 9, 11},
       {5, 1, 3, 3},
       {2},
       {2},
       {1},
       5,
       true,
       {0, 2, 3, 1}},
      {"depthwise 1-d", {1, 4, 37}, {4, 1, 5}, {3}, {2}, {1}, 4, true, {}},
      // Phases of the stride that hold no image column.
      {"depthwise stride 3 width 1",
       {1, 2, 4, 1},
       {2, 1, 1, 1},
       {3},
       {0},
       {1},
       2,
       true,
       {}},
      // Padding wider than the kernel: whole taps fall outside the image.
      {"padding past the kernel",
       {1, 2, 4, 3},
       {3, 2, 2, 3},
       {1, 3},
       {4, 5},
       {1},
       1,
       true,
       {}},
  };
  for (const ConvCase& cc : cases) {
    expect_same_convolution(cc, 1e-3f);
  }
}

// 3x3 stride-1 convolutions with enough channels and pixels take Winograd
// (cpu/winograd.h; its own test holds it to a double reference), from
// NCHW and channels-last inputs: each optimized call counts one, and the
// results match portable. Tolerance: its error is ~2e-6 of the largest
// window's sum of |w * x| (~400 here), so atol 5e-3.
TEST_P(OptimizedKernels, WinogradConvolution) {
  const std::vector<ConvCase> cases = {
      {"pad 1", {2, 20, 13, 11}, {24, 20, 3, 3}, {1}, {1}, {1}, 1, true, {}},
      {"pad 2 no bias",
       {1, 16, 12, 10},
       {17, 16, 3, 3},
       {1},
       {2},
       {1},
       1,
       false,
       {}},
      {"channels-last",
       {1, 33, 9, 15},
       {40, 33, 3, 3},
       {1},
       {1},
       {1},
       1,
       true,
       {0, 2, 3, 1}},
  };
  for (const ConvCase& cc : cases) {
    const int64_t before = opt::winograd_convolutions_run().load();
    expect_same_convolution(cc, 5e-3f);
    EXPECT_EQ(opt::winograd_convolutions_run().load() - before, 1) << cc.name;
  }
}

TEST_P(OptimizedKernels, BatchNorm) {
  // input sizes, dim order
  for (const auto& [sizes, order] :
       std::vector<std::pair<std::vector<int32_t>, std::vector<uint8_t>>>{
           {{2, 5, 7, 9}, {}},
           {{1, 32, 112, 113}, {}}, // threaded planes
           {{3, 7, 11}, {}},
           {{4, 13}, {}},
           {{2, 5, 7, 9}, {0, 2, 3, 1}}, // channels-last
           {{1, 33, 40, 40}, {0, 2, 3, 1}},
           {{1, 16, 160, 160}, {0, 2, 3, 1}}, // threaded pixels
           {{0, 5, 3, 3}, {}}}) {
    const int32_t c = sizes[1];
    auto x = rand_tensor(sizes, order);
    auto weight = rand_tensor({c});
    auto bias = rand_tensor({c});
    auto mean = rand_tensor({c});
    auto var = rand_tensor({c}, {}, 0.1f, 2.0f);
    for (const bool affine : {true, false}) {
      std::optional<Tensor> w, b;
      if (affine) {
        w = weight->tensor();
        b = bias->tensor();
      }
      // out in the input's dim order, as the portable kernel requires.
      std::vector<std::unique_ptr<TestTensor>> owners;
      std::vector<float> results[2];
      for (int o = 0; o < 2; ++o) {
        TestTensor out(ScalarType::Float,
                       sizes,
                       std::vector<float>(numel(sizes), NAN),
                       DYN::STATIC,
                       order);
        TestTensor save_mean(ScalarType::Float, {0}, std::vector<float>{});
        TestTensor save_invstd(ScalarType::Float, {0}, std::vector<float>{});
        TempContext ctx;
        (o ? native::opt__native_batch_norm_legit_no_training_out
           : native::_native_batch_norm_legit_no_training_out)(ctx.get(),
                                                               *x,
                                                               w,
                                                               b,
                                                               *mean,
                                                               *var,
                                                               0.1,
                                                               1e-5,
                                                               out,
                                                               save_mean,
                                                               save_invstd);
        ASSERT_EQ(ctx.get().failure_state(), Error::Ok);
        EXPECT_EQ(save_mean.tensor().numel(), 0);
        results[o] = out.values<float>();
      }
      ASSERT_EQ(results[0].size(), results[1].size());
      for (size_t i = 0; i < results[0].size(); ++i) {
        ASSERT_NEAR(results[1][i],
                    results[0][i],
                    1e-5f + 1e-5f * std::fabs(results[0][i]))
            << "batch norm " << sizes.size() << "-d order "
            << order.size() << " at " << i;
      }
    }
  }
  // A per-channel parameter of the wrong size is the portable kernel's
  // error.
  auto x = rand_tensor({2, 4, 3});
  auto short_mean = rand_tensor({3});
  auto var = rand_tensor({4}, {}, 0.1f, 1.0f);
  TestTensor out(ScalarType::Float, {2, 4, 3}, std::vector<float>(24, 0.0f));
  TestTensor save_mean(ScalarType::Float, {0}, std::vector<float>{});
  TestTensor save_invstd(ScalarType::Float, {0}, std::vector<float>{});
  TempContext ctx;
  native::opt__native_batch_norm_legit_no_training_out(ctx.get(),
                                                       *x,
                                                       std::nullopt,
                                                       std::nullopt,
                                                       *short_mean,
                                                       *var,
                                                       0.1,
                                                       1e-5,
                                                       out,
                                                       save_mean,
                                                       save_invstd);
  EXPECT_EQ(ctx.get().failure_state(), Error::InvalidArgument);
}

// The layout copies move bytes: compare exactly, for several element
// sizes (float, int64 and bool through the same path).
TEST_P(OptimizedKernels, PermuteTransposeClone) {
  // input sizes, input dim order, permutation
  using Case = std::tuple<std::vector<int32_t>,
                          std::vector<uint8_t>,
                          std::vector<int64_t>>;
  const std::vector<Case> cases = {
      {{576, 192}, {}, {1, 0}},      // a linear's weight
      {{37, 45}, {}, {1, 0}},        // ragged 4 x 4 blocks and tiles
      {{197, 3, 64}, {}, {1, 0, 2}}, // heads: rows stay contiguous
      {{3, 197, 64}, {}, {0, 2, 1}}, // keys transposed for q @ k^T
      {{2, 3, 4, 5}, {}, {3, 1, 0, 2}},
      {{33, 7, 41}, {}, {2, 0, 1}},
      {{2, 5, 7, 3}, {0, 2, 3, 1}, {0, 1, 2, 3}}, // channels-last in
      {{4, 0, 3}, {}, {2, 1, 0}},
      {{}, {}, {}},
      {{1, 1100000}, {}, {0, 1}},      // one long dense copy in pieces
      {{1100, 1000}, {}, {1, 0}},      // threaded tiles (over 1 MiB of bytes)
      {{1100, 3, 320}, {}, {1, 0, 2}}, // threaded rows
  };
  for (const auto& [sizes, order, perm] : cases) {
    const std::string what = std::to_string(sizes.size()) + "-d " +
                             std::to_string(numel(sizes)) + " elements";
    std::vector<int32_t> out_sizes;
    for (int64_t p : perm) {
      out_sizes.push_back(sizes[p]);
    }
    const IntArrayRef dims(perm.data(), perm.size());
    for (const ScalarType dtype :
         {ScalarType::Float, ScalarType::Long, ScalarType::Bool}) {
      std::vector<int64_t> values(numel(sizes));
      for (size_t i = 0; i < values.size(); ++i) {
        values[i] = static_cast<int64_t>(i * 7919 % 1000);
      }
      TestTensor x(dtype, sizes, values, DYN::STATIC, order);
      auto run = [&](bool o, const std::vector<int32_t>& shape, auto kernel) {
        TestTensor out(dtype, shape, std::vector<int64_t>(numel(shape), 0));
        TempContext ctx;
        kernel(ctx.get(), o, x.tensor(), out.tensor());
        EXPECT_EQ(ctx.get().failure_state(), Error::Ok) << what;
        return out.values<int64_t>();
      };
      auto permute = [&](KernelRuntimeContext& c, bool o, Tensor& in,
                         Tensor& out) {
        o ? native::opt_permute_copy_out(c, in, dims, out)
          : native::permute_copy_out(c, in, dims, out);
      };
      EXPECT_EQ(run(true, out_sizes, permute), run(false, out_sizes, permute))
          << "permute " << what;
      auto clone = [&](KernelRuntimeContext& c, bool o, Tensor& in,
                       Tensor& out) {
        o ? native::opt_clone_out(c, in, std::nullopt, out)
          : native::clone_out(c, in, std::nullopt, out);
      };
      EXPECT_EQ(run(true, sizes, clone), run(false, sizes, clone))
          << "clone " << what;
      if (sizes.size() >= 2) {
        std::vector<int32_t> t_sizes = sizes;
        std::swap(t_sizes[0], t_sizes.back());
        auto transpose = [&](KernelRuntimeContext& c, bool o, Tensor& in,
                             Tensor& out) {
          o ? native::opt_transpose_copy_int_out(c, in, 0, -1, out)
            : native::transpose_copy_int_out(c, in, 0, -1, out);
        };
        EXPECT_EQ(run(true, t_sizes, transpose), run(false, t_sizes, transpose))
            << "transpose " << what;
      }
    }
  }
  // A repeated dim is the portable kernel's error.
  auto x = rand_tensor({2, 3});
  TestTensor out(ScalarType::Float, {2, 3}, std::vector<float>(6, 0.0f));
  const std::vector<int64_t> repeated = {0, 0};
  TempContext ctx;
  native::opt_permute_copy_out(
      ctx.get(), *x, IntArrayRef(repeated.data(), 2), out);
  EXPECT_EQ(ctx.get().failure_state(), Error::InvalidArgument);
}

// unsqueeze_copy and squeeze_copy.dims: size-1 dims added and dropped, at
// either end and inside, negative dims, listed dims that are not of size 1,
// an empty list, channels-last, empty and 0-dim inputs, three dtypes.
TEST_P(OptimizedKernels, UnsqueezeSqueeze) {
  using Case = std::pair<std::vector<int32_t>, std::vector<uint8_t>>;
  for (const auto& [sizes, order] :
       std::vector<Case>{{{3, 1, 5}, {}},
                         {{2, 1, 4, 1}, {0, 2, 3, 1}},
                         {{0, 1, 3}, {}},
                         {{}, {}}}) {
    const int64_t rank = static_cast<int64_t>(sizes.size());
    for (const ScalarType dtype :
         {ScalarType::Float, ScalarType::Long, ScalarType::Bool}) {
      std::vector<int64_t> values(numel(sizes));
      for (size_t i = 0; i < values.size(); ++i) {
        values[i] = static_cast<int64_t>(i * 7919 % 1000);
      }
      TestTensor x(dtype, sizes, values, DYN::STATIC, order);
      const std::string what = std::to_string(rank) + "-d order " +
                               std::to_string(order.size()) + " dtype " +
                               std::to_string(static_cast<int>(dtype));
      // Both kernels into an out of `shape`: values and context state.
      auto same = [&](const std::vector<int32_t>& shape,
                      auto kernel,
                      const std::string& op) {
        std::vector<int64_t> got[2];
        Error state[2];
        for (int o = 0; o < 2; ++o) {
          TestTensor out(dtype, shape, std::vector<int64_t>(numel(shape), 0));
          TempContext ctx;
          kernel(ctx.get(), o == 1, out.tensor());
          state[o] = ctx.get().failure_state();
          got[o] = out.values<int64_t>();
        }
        EXPECT_EQ(state[1], state[0]) << op << " " << what;
        EXPECT_EQ(got[1], got[0]) << op << " " << what;
      };
      for (const int64_t dim : {int64_t{0}, int64_t{-1}, rank / 2, rank + 3}) {
        const int64_t d = dim < 0 ? dim + rank + 1 : dim;
        std::vector<int32_t> shape = sizes;
        if (d <= rank) {
          shape.insert(shape.begin() + d, 1);
        }
        same(
            shape,
            [&](auto& c, bool o, Tensor& out) {
              o ? native::opt_unsqueeze_copy_out(c, x, dim, out)
                : native::unsqueeze_copy_out(c, x, dim, out);
            },
            "unsqueeze " + std::to_string(dim));
      }
      for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{
               {1}, {-1}, {0, 1}, {}, {1, -1}, {1, 1}}) {
        std::vector<int32_t> shape;
        for (int64_t k = 0; k < rank; ++k) {
          bool listed = false;
          for (int64_t d : dims) {
            listed = listed || (d < 0 ? d + rank : d) == k;
          }
          if (!listed || sizes[k] != 1) {
            shape.push_back(sizes[k]);
          }
        }
        same(
            shape,
            [&](auto& c, bool o, Tensor& out) {
              const IntArrayRef list(dims.data(), dims.size());
              o ? native::opt_squeeze_copy_dims_out(c, x, list, out)
                : native::squeeze_copy_dims_out(c, x, list, out);
            },
            "squeeze " + std::to_string(dims.size()) + " dims");
      }
    }
  }
}

// max_pool2d_with_indices: values and indices equal to portable's, with
// ties, NaN, padding, ceil_mode, 3-d and 4-d inputs; dilation and
// channels-last (portable), empty inputs and bad padding.
TEST_P(OptimizedKernels, MaxPool) {
  struct Case {
    std::vector<int32_t> in;
    std::vector<uint8_t> order;
    std::vector<int64_t> kernel, stride, padding, dilation;
    bool ceil_mode;
  };
  const std::vector<Case> cases = {
      {{1, 4, 11, 13}, {}, {3}, {2}, {1}, {}, false}, // a CNN stem's pool
      {{1, 4, 11, 13}, {}, {3}, {2}, {1}, {1}, true},
      {{2, 3, 8, 8}, {}, {2}, {}, {}, {}, false},
      {{3, 9, 7}, {}, {3, 2}, {1, 2}, {1, 0}, {1, 1}, true},
      {{1, 2, 9, 9}, {}, {3}, {1}, {1}, {2}, false}, // dilation: portable
      {{1, 3, 6, 7}, {0, 2, 3, 1}, {3}, {2}, {1}, {}, false}, // portable
      {{0, 3, 5, 5}, {}, {2}, {2}, {}, {}, false},
      {{1, 2, 5, 5}, {}, {2}, {2}, {2}, {}, false}, // bad padding
  };
  for (const Case& c : cases) {
    // Few distinct values (ties), one NaN in the first plane.
    std::vector<float> values = random_values(numel(c.in));
    for (float& v : values) {
      v = std::round(v);
    }
    if (values.size() > 20) {
      values[20] = NAN;
    }
    TestTensor x(ScalarType::Float, c.in, values, DYN::STATIC, c.order);
    const IntArrayRef kernel(c.kernel.data(), c.kernel.size());
    const IntArrayRef stride(c.stride.data(), c.stride.size());
    const IntArrayRef padding(c.padding.data(), c.padding.size());
    const IntArrayRef dilation(c.dilation.data(), c.dilation.size());
    std::vector<float> got[2];
    std::vector<int64_t> got_indices[2];
    Error state[2];
    for (int o = 0; o < 2; ++o) {
      // Outs of the input's size shrink to the pool's (the kernels resize).
      TestTensor out(ScalarType::Float,
                     c.in,
                     std::vector<float>(numel(c.in), 0.0f),
                     DYN::DYNAMIC_BOUND);
      TestTensor indices(ScalarType::Long,
                         c.in,
                         std::vector<int64_t>(numel(c.in), 0),
                         DYN::DYNAMIC_BOUND);
      TempContext ctx;
      if (o == 1) {
        native::opt_max_pool2d_with_indices_out(ctx.get(),
                                                x,
                                                kernel,
                                                stride,
                                                padding,
                                                dilation,
                                                c.ceil_mode,
                                                out,
                                                indices);
      } else {
        native::max_pool2d_with_indices_out(ctx.get(),
                                            x,
                                            kernel,
                                            stride,
                                            padding,
                                            dilation,
                                            c.ceil_mode,
                                            out,
                                            indices);
      }
      state[o] = ctx.get().failure_state();
      got[o] = out.values<float>();
      got_indices[o] = indices.values<int64_t>();
    }
    const std::string what =
        std::to_string(numel(c.in)) + " elements, kernel " +
        std::to_string(c.kernel[0]) + " ceil " + std::to_string(c.ceil_mode);
    EXPECT_EQ(state[1], state[0]) << what;
    EXPECT_EQ(state[0] == Error::Ok, &c != &cases.back()) << what;
    EXPECT_EQ(got_indices[1], got_indices[0]) << what;
    ASSERT_EQ(got[1].size(), got[0].size()) << what;
    for (size_t i = 0; i < got[0].size(); ++i) {
      EXPECT_TRUE(got[1][i] == got[0][i] ||
                  (std::isnan(got[1][i]) && std::isnan(got[0][i])))
          << what << " [" << i << "]";
    }
  }
}

TEST_P(OptimizedKernels, SumMean) {
  struct Case {
    std::vector<int32_t> in;
    std::vector<uint8_t> order;
    std::vector<int64_t> dims;
    bool keepdim;
  };
  const std::vector<Case> cases = {
      {{1, 1280, 7, 7}, {}, {-1, -2}, true}, // a global average pool
      {{16, 128, 77}, {}, {-1}, false},      // rows not a multiple of a vector
      {{40, 100, 77}, {}, {-1}, true},       // threaded rows
      {{3, 5, 7}, {}, {}, false},            // every dim
      {{3, 5, 7}, {}, {0, 1, 2}, true},
      {{4, 6, 5}, {}, {1}, false},               // an inner dim: portable
      {{2, 3, 4, 5}, {0, 2, 3, 1}, {-1}, false}, // channels-last: portable
      {{0, 9}, {}, {1}, true},                   // no rows
      {{3, 0}, {}, {1}, false}, // empty rows: mean's NaN from portable
  };
  for (const Case& c : cases) {
    auto x = rand_tensor(c.in, c.order);
    std::vector<int32_t> out_sizes;
    const int64_t rank = static_cast<int64_t>(c.in.size());
    for (int64_t d = 0; d < rank; ++d) {
      bool reduced = c.dims.empty();
      for (int64_t r : c.dims) {
        reduced = reduced || (r < 0 ? r + rank : r) == d;
      }
      if (!reduced) {
        out_sizes.push_back(c.in[d]);
      } else if (c.keepdim) {
        out_sizes.push_back(1);
      }
    }
    const IntArrayRef dims(c.dims.data(), c.dims.size());
    const std::string what = std::to_string(numel(c.in)) + " elements";
    expect_same(
        {out_sizes},
        [&](auto& ctx, bool o, std::vector<Tensor*>& outs) {
          (o ? native::opt_sum_dim_out : native::sum_dim_out)(
              ctx, *x, dims, c.keepdim, std::nullopt, *outs[0]);
        },
        "sum " + what,
        1e-4f);
    expect_same(
        {out_sizes},
        [&](auto& ctx, bool o, std::vector<Tensor*>& outs) {
          (o ? native::opt_mean_dim_out : native::mean_dim_out)(
              ctx, *x, dims, c.keepdim, std::nullopt, *outs[0]);
        },
        "mean " + what,
        1e-5f);
  }
  // A repeated dim is portable's error.
  auto x = rand_tensor({2, 3});
  TestTensor out(ScalarType::Float, {2}, std::vector<float>(2, 0.0f));
  const std::vector<int64_t> repeated = {1, 1};
  TempContext ctx;
  native::opt_mean_dim_out(
      ctx.get(), *x, IntArrayRef(repeated.data(), 2), false, std::nullopt, out);
  EXPECT_EQ(ctx.get().failure_state(), Error::InvalidArgument);
}

TEST_P(OptimizedKernels, ExpandSelect) {
  // Same values and errors as portable, for float (4-byte runs), long and
  // bool; channels-last and transposed inputs.
  auto same = [](const char* what,
                 ScalarType dtype,
                 const std::vector<int32_t>& in_sizes,
                 const std::vector<uint8_t>& order,
                 const std::vector<int32_t>& out_sizes,
                 auto kernel) {
    std::vector<int64_t> values(numel(in_sizes));
    for (size_t i = 0; i < values.size(); ++i) {
      values[i] = static_cast<int64_t>(i * 7919 % 1000);
    }
    TestTensor x(dtype, in_sizes, values, DYN::STATIC, order);
    Error errors[2];
    std::vector<int64_t> results[2];
    for (int o = 0; o < 2; ++o) {
      TestTensor out(
          dtype, out_sizes, std::vector<int64_t>(numel(out_sizes), 0));
      TempContext ctx;
      kernel(ctx.get(), o == 1, x.tensor(), out.tensor());
      errors[o] = ctx.get().failure_state();
      results[o] = out.values<int64_t>();
    }
    EXPECT_EQ(errors[1], errors[0]) << what;
    EXPECT_EQ(results[1], results[0]) << what;
  };
  struct ExpandCase {
    std::vector<int32_t> in;
    std::vector<uint8_t> order;
    std::vector<int64_t> size;
    std::vector<int32_t> out;
  };
  const std::vector<ExpandCase> expands = {
      {{1, 1, 192}, {}, {1, 1, 192}, {1, 1, 192}}, // a class token, as is
      {{3, 1, 5}, {}, {2, 3, 4, -1}, {2, 3, 4, 5}}, // new and expanded dims
      {{4, 1}, {}, {4, 33}, {4, 33}}, // the innermost dim broadcast
      {{2, 3, 1, 4}, {0, 2, 3, 1}, {2, 3, 5, 4}, {2, 3, 5, 4}},
      {{0, 1}, {}, {0, 6}, {0, 6}},
      {{2, 3}, {}, {2, 4}, {2, 3}}, // 3 cannot expand to 4: portable's error
  };
  for (const ExpandCase& e : expands) {
    for (const ScalarType dtype :
         {ScalarType::Float, ScalarType::Long, ScalarType::Bool}) {
      const IntArrayRef size(e.size.data(), e.size.size());
      same("expand",
           dtype,
           e.in,
           e.order,
           e.out,
           [&](KernelRuntimeContext& c, bool o, Tensor& in, Tensor& out) {
             o ? native::opt_expand_copy_out(c, in, size, false, out)
               : native::expand_copy_out(c, in, size, false, out);
           });
    }
  }
  struct SelectCase {
    std::vector<int32_t> in;
    std::vector<uint8_t> order;
    int64_t dim, index;
    std::vector<int32_t> out;
  };
  const std::vector<SelectCase> selects = {
      {{1, 197, 192}, {}, 1, 0, {1, 192}}, // a class token's row
      {{3, 7, 5}, {}, 0, -1, {7, 5}}, // q, k or v of a packed projection
      {{4, 6, 9}, {}, -1, 8, {4, 6}}, // a column: strided
      {{2, 3, 4, 5}, {0, 2, 3, 1}, 1, 2, {2, 4, 5}},
      {{5}, {}, 0, 3, {}},
      {{2, 3}, {}, 1, 3, {2}}, // out of range: portable's error
  };
  for (const SelectCase& c : selects) {
    for (const ScalarType dtype :
         {ScalarType::Float, ScalarType::Long, ScalarType::Bool}) {
      same("select",
           dtype,
           c.in,
           c.order,
           c.out,
           [&](KernelRuntimeContext& ctx, bool o, Tensor& in, Tensor& out) {
             o ? native::opt_select_copy_int_out(ctx, in, c.dim, c.index, out)
               : native::select_copy_int_out(ctx, in, c.dim, c.index, out);
           });
    }
  }
}

std::string param_name(
    const ::testing::TestParamInfo<std::tuple<opt::Isa, int>>& info) {
  return std::string(opt::isa_name(std::get<0>(info.param))) + "_" +
         std::to_string(std::get<1>(info.param)) + "threads";
}

INSTANTIATE_TEST_SUITE_P(
    AllIsas,
    OptimizedKernels,
    ::testing::Combine(::testing::Values(opt::Isa::kPortable,
                                         opt::Isa::kAvx2,
                                         opt::Isa::kAvx512),
                       ::testing::Values(1, 2)),
    param_name);

} // namespace
