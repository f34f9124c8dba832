// The LLM custom-op kernels against references written out here in double
// precision (two-pass softmax over explicit scores): attention with causal
// masks from start_pos, grouped-query heads, additive masks, one and many
// query rows, head dims that leave vector tails; float16 through the
// reference loops; cache writes; the Hadamard transform against its
// matrix; bad arguments; and no heap allocation per attention call.

#include <cmath>
#include <cstdlib>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/extension/llm/custom_ops/attention.h>
#include <executorch/kernels/portable/test/test_tensor.h>
#include <executorch/runtime/testing/heap_allocations.h>
#ifdef ET_USE_THREADPOOL
#include <executorch/extension/threadpool/threadpool.h>
#endif
#ifdef ET_LLM_TEST_ISAS
#include <executorch/kernels/optimized/simd/isa.h>
#endif

using namespace torch::executor::testing;
namespace native = torch::executor::native;
using ::executorch::extension::llm::AttentionProblem;

namespace {

std::vector<float> pseudo_random(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t state = seed * 2654435761u + 1;
  for (auto& x : v) {
    state = state * 1664525u + 1013904223u;
    x = static_cast<float>((state >> 8) & 0xFFFF) / 32768.0f - 1.0f;
  }
  return v;
}

struct Case {
  int32_t batch, seq, heads, kv_heads, head_dim, max_seq, start_pos;
  bool causal;
  bool mask;
};

// out[b, s, h, :] by the definition: scores over the attended positions,
// softmax, weighted sum of values.
std::vector<double> expected_attention(const Case& c,
                                       const std::vector<float>& q,
                                       const std::vector<float>& k,
                                       const std::vector<float>& v,
                                       const std::vector<float>& mask) {
  const int64_t kv_len = c.mask ? c.max_seq : c.start_pos + c.seq;
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.head_dim));
  std::vector<double> out(q.size());
  for (int b = 0; b < c.batch; ++b) {
    for (int s = 0; s < c.seq; ++s) {
      for (int h = 0; h < c.heads; ++h) {
        const int kvh = h / (c.heads / c.kv_heads);
        const int64_t keys =
            c.causal ? std::min<int64_t>(c.start_pos + s + 1, kv_len) : kv_len;
        std::vector<double> scores(keys);
        double max_score = -INFINITY;
        for (int64_t j = 0; j < keys; ++j) {
          double dot = 0;
          for (int d = 0; d < c.head_dim; ++d) {
            dot += double(q[((b * c.seq + s) * c.heads + h) * c.head_dim + d]) *
                   k[((b * c.max_seq + j) * c.kv_heads + kvh) * c.head_dim + d];
          }
          scores[j] = dot * scale + (c.mask ? mask[s * kv_len + j] : 0.0);
          max_score = std::max(max_score, scores[j]);
        }
        double total = 0;
        for (auto& x : scores) {
          x = std::exp(x - max_score);
          total += x;
        }
        for (int d = 0; d < c.head_dim; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < keys; ++j) {
            acc += scores[j] *
                   v[((b * c.max_seq + j) * c.kv_heads + kvh) * c.head_dim + d];
          }
          out[((b * c.seq + s) * c.heads + h) * c.head_dim + d] = acc / total;
        }
      }
    }
  }
  return out;
}

const Case kCases[] = {
    // decode steps: one query row at position start_pos
    {1, 1, 4, 4, 64, 128, 0, true, false},
    {1, 1, 8, 2, 64, 128, 77, true, false},
    {2, 1, 4, 1, 40, 96, 95, true, false}, // MQA, last slot, vector tail
    // decode takes the heads that share a key/value head together
    {1, 1, 12, 4, 64, 130, 128, true, false}, // 3 per KV head (Llama bench)
    {2, 1, 12, 2, 24, 40, 20, true, false},   // 6: tiles of 4 and 2, tail
    {1, 1, 6, 2, 16, 20, 2, false, true},     // with an additive mask
    // prefill and chunked prefill, several query rows
    {1, 7, 4, 2, 32, 64, 0, true, false},
    {2, 33, 6, 3, 16, 80, 5, true, false}, // more keys than one block
    {1, 5, 4, 4, 8, 16, 3, false, false},  // not causal
    {1, 3, 4, 2, 16, 20, 2, false, true},  // additive mask over the cache
    {1, 4, 2, 2, 3, 9, 1, true, false},    // head_dim below a vector
};

struct Tensors {
  Case c;
  std::vector<float> q, k, v, mask;
  explicit Tensors(const Case& c_)
      : c(c_),
        q(pseudo_random(size_t(c.batch) * c.seq * c.heads * c.head_dim, 1)),
        k(pseudo_random(size_t(c.batch) * c.max_seq * c.kv_heads * c.head_dim,
                        2)),
        v(pseudo_random(size_t(c.batch) * c.max_seq * c.kv_heads * c.head_dim,
                        3)),
        mask(pseudo_random(size_t(c.seq) * c.max_seq, 4)) {
    // Some masked-out positions, as a sliding-window mask has.
    for (size_t i = 0; i < mask.size(); i += 3) {
      mask[i] = -INFINITY;
    }
  }
};

std::vector<float> run_custom_sdpa(const Case& c,
                                   Tensors& t,
                                   ScalarType dtype) {
  TestTensor q(dtype, {c.batch, c.seq, c.heads, c.head_dim}, t.q);
  TestTensor k(dtype, {c.batch, c.max_seq, c.kv_heads, c.head_dim}, t.k);
  TestTensor v(dtype, {c.batch, c.max_seq, c.kv_heads, c.head_dim}, t.v);
  TestTensor mask(dtype, {c.seq, c.max_seq}, t.mask);
  TestTensor out(
      dtype, {c.batch, c.seq, c.heads, c.head_dim}, zeros(t.q.size()));
  TempContext ctx;
  std::optional<Tensor> m;
  if (c.mask) {
    m = mask.tensor();
  }
  native::custom_sdpa_out(
      ctx.get(), q, k, v, c.start_pos, m, 0.0, c.causal, std::nullopt, out);
  EXPECT_EQ(ctx.get().failure_state(), Error::Ok);
  return out.values<float>();
}

void expect_close(const std::vector<float>& got,
                  const std::vector<double>& want,
                  double tolerance,
                  const char* what) {
  ASSERT_EQ(got.size(), want.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(std::abs(got[i] - want[i]) <= tolerance * (1 + std::abs(want[i])))) {
      if (++bad <= 3) {
        ADD_FAILURE() << what << " [" << i << "]: got " << got[i] << " want "
                      << want[i];
      }
    }
  }
  EXPECT_EQ(bad, 0u) << what;
}

#ifdef ET_LLM_TEST_ISAS
namespace opt = ::executorch::kernels::optimized;
using Isa = opt::Isa;
const Isa kIsas[] = {Isa::kPortable, Isa::kAvx2, Isa::kAvx512};
#else
enum class Isa { kPortable };
const Isa kIsas[] = {Isa::kPortable};
#endif

// (instruction set, threads) for the float32 attention.
class Attention : public ::testing::TestWithParam<std::tuple<Isa, int>> {
 protected:
  void SetUp() override {
#ifdef ET_LLM_TEST_ISAS
    const Isa isa = std::get<0>(GetParam());
    if (!opt::isa_available(isa)) {
      GTEST_SKIP() << opt::isa_name(isa) << " is not available here";
    }
    previous_ = opt::selected_isa();
    ASSERT_TRUE(opt::select_isa_for_testing(isa));
#endif
#ifdef ET_USE_THREADPOOL
    ASSERT_TRUE(executorch::extension::threadpool::get_threadpool()
                    ->_unsafe_reset_threadpool(std::get<1>(GetParam())));
#endif
  }
  void TearDown() override {
#ifdef ET_LLM_TEST_ISAS
    opt::select_isa_for_testing(previous_);
#endif
#ifdef ET_USE_THREADPOOL
    executorch::extension::threadpool::get_threadpool()
        ->_unsafe_reset_threadpool(0);
#endif
  }

 private:
  Isa previous_ = Isa::kPortable;
};

TEST_P(Attention, MatchesDefinition) {
  for (const Case& c : kCases) {
    Tensors t(c);
    const auto want = expected_attention(c, t.q, t.k, t.v, t.mask);
    expect_close(run_custom_sdpa(c, t, ScalarType::Float),
                 want,
                 2e-5,
                 ::executorch::extension::llm::attention_f32_isa());
  }
}

TEST_P(Attention, AllocatesNothingPerCall) {
  const Case c = kCases[4];
  Tensors t(c);
  run_custom_sdpa(c, t, ScalarType::Float); // warms the pool up
  TestTensor q(ScalarType::Float, {c.batch, c.seq, c.heads, c.head_dim}, t.q);
  TestTensor k(
      ScalarType::Float, {c.batch, c.max_seq, c.kv_heads, c.head_dim}, t.k);
  TestTensor v(
      ScalarType::Float, {c.batch, c.max_seq, c.kv_heads, c.head_dim}, t.v);
  TestTensor out(ScalarType::Float,
                 {c.batch, c.seq, c.heads, c.head_dim},
                 zeros(t.q.size()));
  TempContext ctx;
  const long before = ::executorch::runtime::testing::heap_allocations();
  native::custom_sdpa_out(ctx.get(),
                          q,
                          k,
                          v,
                          c.start_pos,
                          std::nullopt,
                          0.0,
                          true,
                          std::nullopt,
                          out);
  EXPECT_EQ(::executorch::runtime::testing::heap_allocations() - before, 0);
  EXPECT_EQ(ctx.get().failure_state(), Error::Ok);
}

INSTANTIATE_TEST_SUITE_P(IsasAndThreads,
                         Attention,
                         ::testing::Combine(::testing::ValuesIn(kIsas),
                                            ::testing::Values(1, 2)));

TEST(AttentionReference, HalfWithinHalfPrecision) {
  for (const Case& c : kCases) {
    Tensors t(c);
    const auto want = expected_attention(c, t.q, t.k, t.v, t.mask);
    // Inputs rounded to half, then attention in float: ~1e-3 relative.
    expect_close(run_custom_sdpa(c, t, ScalarType::Half), want, 4e-3, "half");
  }
}

TEST(SdpaWithKvCache, PrefillThenDecodeFillsTheCache) {
  const int32_t max_seq = 12, heads = 4, kv_heads = 2, dim = 8;
  const auto all_k = pseudo_random(size_t(max_seq) * kv_heads * dim, 5);
  const auto all_v = pseudo_random(size_t(max_seq) * kv_heads * dim, 6);
  TestTensor k_cache(
      ScalarType::Float, {1, max_seq, kv_heads, dim}, zeros(all_k.size()));
  TestTensor v_cache(
      ScalarType::Float, {1, max_seq, kv_heads, dim}, zeros(all_v.size()));
  const size_t row = size_t(kv_heads) * dim;
  for (auto [start, seq] :
       {std::pair{0, 5}, std::pair{5, 1}, std::pair{6, 1}}) {
    const std::vector<float> k_rows(all_k.begin() + start * row,
                                    all_k.begin() + (start + seq) * row);
    const std::vector<float> v_rows(all_v.begin() + start * row,
                                    all_v.begin() + (start + seq) * row);
    const auto q_rows = pseudo_random(size_t(seq) * heads * dim, 7 + start);
    TestTensor q(ScalarType::Float, {1, seq, heads, dim}, q_rows);
    TestTensor k(ScalarType::Float, {1, seq, kv_heads, dim}, k_rows);
    TestTensor v(ScalarType::Float, {1, seq, kv_heads, dim}, v_rows);
    TestTensor out(
        ScalarType::Float, {1, seq, heads, dim}, zeros(q_rows.size()));
    TempContext ctx;
    native::sdpa_with_kv_cache_out(ctx.get(),
                                   q,
                                   k,
                                   v,
                                   k_cache,
                                   v_cache,
                                   start,
                                   seq,
                                   std::nullopt,
                                   0.0,
                                   true,
                                   std::nullopt,
                                   out);
    ASSERT_EQ(ctx.get().failure_state(), Error::Ok);
    const Case c{1, seq, heads, kv_heads, dim, max_seq, start, true, false};
    expect_close(out.values<float>(),
                 expected_attention(c, q_rows, all_k, all_v, {}),
                 2e-5,
                 "step");
  }
  const auto cached = k_cache.values<float>();
  for (size_t i = 0; i < 7 * row; ++i) {
    ASSERT_EQ(cached[i], all_k[i]) << i;
  }
  for (size_t i = 7 * row; i < cached.size(); ++i) {
    ASSERT_EQ(cached[i], 0.0f) << i;
  }
}

TEST(UpdateCache, WritesRowsAtStartPosAndIndices) {
  const auto rows = pseudo_random(2 * 3 * 2 * 4, 8);
  TestTensor value(ScalarType::Float, {2, 3, 2, 4}, rows);
  TestTensor cache(ScalarType::Float, {2, 6, 2, 4}, zeros(2 * 6 * 2 * 4));
  TestTensor out(ScalarType::Float, {1}, zeros(1));
  TempContext ctx;
  native::update_cache_out(ctx.get(), value, cache, 2, out);
  ASSERT_EQ(ctx.get().failure_state(), Error::Ok);
  auto got = cache.values<float>();
  for (int b = 0; b < 2; ++b) {
    for (int pos = 0; pos < 6; ++pos) {
      for (int i = 0; i < 8; ++i) {
        const bool written = pos >= 2 && pos < 5;
        const float want = written ? rows[(b * 3 + pos - 2) * 8 + i] : 0.0f;
        ASSERT_EQ(got[(b * 6 + pos) * 8 + i], want) << b << " " << pos;
      }
    }
  }
  TestTensor indices(
      ScalarType::Long, {2, 3}, std::vector<int64_t>{5, 0, 1, 4, 3, 2});
  native::update_cache_with_indices_out(
      ctx.get(), value, cache, 0, indices, out);
  ASSERT_EQ(ctx.get().failure_state(), Error::Ok);
  got = cache.values<float>();
  const int64_t where[2][3] = {{5, 0, 1}, {4, 3, 2}};
  for (int b = 0; b < 2; ++b) {
    for (int s = 0; s < 3; ++s) {
      for (int i = 0; i < 8; ++i) {
        ASSERT_EQ(got[(b * 6 + where[b][s]) * 8 + i],
                  rows[(b * 3 + s) * 8 + i]);
      }
    }
  }
}

TEST(FastHadamardTransform, MatchesNormalizedHadamardMatrix) {
  const int n = 32;
  const auto x = pseudo_random(3 * n, 9);
  TestTensor mat(ScalarType::Float, {3, n}, x);
  TestTensor out(ScalarType::Float, {3, n}, zeros(3 * n));
  TempContext ctx;
  native::fast_hadamard_transform_out(ctx.get(), mat, out);
  ASSERT_EQ(ctx.get().failure_state(), Error::Ok);
  std::vector<double> want(3 * n);
  for (int r = 0; r < 3; ++r) {
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int i = 0; i < n; ++i) {
        // H[i][j] = (-1)^popcount(i & j)
        acc += (__builtin_popcount(i & j) % 2 ? -1.0 : 1.0) * x[r * n + i];
      }
      want[r * n + j] = acc / std::sqrt(double(n));
    }
  }
  expect_close(out.values<float>(), want, 1e-5, "hadamard");
}

// Each call must fail its context (and write nothing out of bounds).
TEST(CustomOps, BadArgumentsFail) {
  TestTensor q(ScalarType::Float, {1, 2, 3, 4}, zeros(24));
  TestTensor q_int(ScalarType::Int, {1, 2, 4, 4}, zeros(32));
  TestTensor q_ok(ScalarType::Float, {1, 2, 4, 4}, zeros(32));
  TestTensor cache(ScalarType::Float, {1, 8, 2, 4}, zeros(64));
  TestTensor mask(ScalarType::Float, {2, 8}, zeros(16));
  TestTensor out(
      ScalarType::Float, {1, 2, 4, 4}, zeros(32), DYN::DYNAMIC_BOUND);
  TestTensor small(ScalarType::Float, {1, 2, 2, 4}, zeros(16));
  TestTensor placeholder(ScalarType::Float, {1}, zeros(1));
  TestTensor odd(ScalarType::Float, {2, 12}, zeros(24));
  TestTensor odd_out(ScalarType::Float, {2, 12}, zeros(24));
  auto fails = [](auto call) {
    TempContext ctx;
    call(ctx.get());
    return ctx.get().failure_state() != Error::Ok;
  };
  // 3 query heads over 2 kv heads
  EXPECT_TRUE(fails([&](auto& ctx) {
    native::custom_sdpa_out(
        ctx, q, cache, cache, 0, std::nullopt, 0.0, true, std::nullopt, out);
  }));
  EXPECT_TRUE(fails([&](auto& ctx) {
    native::custom_sdpa_out(ctx,
                            q_int,
                            cache,
                            cache,
                            0,
                            std::nullopt,
                            0.0,
                            true,
                            std::nullopt,
                            out);
  }));
  // start_pos + seq past the cache
  EXPECT_TRUE(fails([&](auto& ctx) {
    native::custom_sdpa_out(
        ctx, q_ok, cache, cache, 7, std::nullopt, 0.0, true, std::nullopt, out);
  }));
  EXPECT_TRUE(fails([&](auto& ctx) {
    native::custom_sdpa_out(ctx,
                            q_ok,
                            cache,
                            cache,
                            -1,
                            std::nullopt,
                            0.0,
                            true,
                            std::nullopt,
                            out);
  }));
  // mask and causal together; dropout
  EXPECT_TRUE(fails([&](auto& ctx) {
    native::custom_sdpa_out(ctx,
                            q_ok,
                            cache,
                            cache,
                            0,
                            mask.tensor(),
                            0.0,
                            true,
                            std::nullopt,
                            out);
  }));
  EXPECT_TRUE(fails([&](auto& ctx) {
    native::custom_sdpa_out(
        ctx, q_ok, cache, cache, 0, std::nullopt, 0.1, true, std::nullopt, out);
  }));
  EXPECT_TRUE(fails([&](auto& ctx) {
    native::update_cache_out(ctx, small, cache, 7, placeholder);
  }));
  EXPECT_TRUE(fails([&](auto& ctx) {
    native::update_cache_out(ctx, q_ok, cache, 0, placeholder);
  }));
  TestTensor bad_index(ScalarType::Long, {1, 2}, std::vector<int64_t>{0, 8});
  EXPECT_TRUE(fails([&](auto& ctx) {
    native::update_cache_with_indices_out(
        ctx, small, cache, 0, bad_index, placeholder);
  }));
  EXPECT_TRUE(fails([&](auto& ctx) {
    native::fast_hadamard_transform_out(ctx, odd, odd_out);
  }));
  // The failed calls left the cache as it was.
  for (float x : cache.values<float>()) {
    ASSERT_EQ(x, 0.0f);
  }
}

} // namespace
