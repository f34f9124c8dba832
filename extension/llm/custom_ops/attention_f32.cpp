// attention_f32: the rows of the problem split over the process-wide
// thread pool (parallel_for), each chunk computed by the instruction set
// the optimized kernels selected (kernels/optimized/simd/isa.h), or the
// portable build when the optimized kernels are not built.

#include <executorch/extension/llm/custom_ops/attention.h>
#include <executorch/extension/llm/custom_ops/attention_f32_simd.h>
#include <executorch/runtime/kernel/thread_parallel_interface.h>

#ifdef ET_LLM_WITH_ISA_SELECTION
#include <executorch/kernels/optimized/simd/isa.h>
#endif

namespace executorch {
namespace extension {
namespace llm {

namespace {

using RowsFn = void (*)(const AttentionProblem&,
                        const float*,
                        const float*,
                        const float*,
                        float*,
                        int64_t,
                        int64_t);

struct Variant {
  RowsFn rows;
  const char* isa;
};

Variant select_variant() {
#ifdef ET_LLM_WITH_ISA_SELECTION
  using ::executorch::kernels::optimized::Isa;
  switch (::executorch::kernels::optimized::selected_isa()) {
#ifdef ET_LLM_HAVE_AVX512
    case Isa::kAvx512:
      return {avx512::attention_f32_rows, "avx512"};
#endif
#ifdef ET_LLM_HAVE_AVX2
    case Isa::kAvx2:
      return {avx2::attention_f32_rows, "avx2"};
#endif
    default:
      break;
  }
#endif
  return {portable::attention_f32_rows, "portable"};
}

// Multiply-adds per parallel_for chunk below which another thread does not
// pay for its wake-up.
constexpr int64_t kWorkPerChunk = 1 << 14;

} // namespace

void attention_f32(const AttentionProblem& p,
                   const float* query,
                   const float* key,
                   const float* value,
                   float* out) {
  const RowsFn rows = select_variant().rows;
  const int64_t work_per_row = std::max<int64_t>(1, 2 * p.kv_len * p.head_dim);
  const int64_t grain = std::max<int64_t>(1, kWorkPerChunk / work_per_row);
  ::executorch::extension::parallel_for(
      0, p.rows(), grain, [&](int64_t begin, int64_t end) {
        rows(p, query, key, value, out, begin, end);
      });
}

const char* attention_f32_isa() {
  return select_variant().isa;
}

} // namespace llm
} // namespace extension
} // namespace executorch
