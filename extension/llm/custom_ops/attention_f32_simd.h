#pragma once

// attention_f32_rows for each instruction set the build compiled
// attention_f32_simd.cpp for (ET_LLM_HAVE_<ISA>): rows [row_begin,
// row_end) of the problem, numbered as AttentionProblem::rows() says.

#include <executorch/extension/llm/custom_ops/attention.h>

namespace executorch {
namespace extension {
namespace llm {

#define ET_LLM_DECLARE_ATTENTION_ROWS(isa)           \
  namespace isa {                                    \
  void attention_f32_rows(const AttentionProblem& p, \
                          const float* query,        \
                          const float* key,          \
                          const float* value,        \
                          float* out,                \
                          int64_t row_begin,         \
                          int64_t row_end);          \
  }

ET_LLM_DECLARE_ATTENTION_ROWS(portable)
ET_LLM_DECLARE_ATTENTION_ROWS(avx2)
ET_LLM_DECLARE_ATTENTION_ROWS(avx512)

#undef ET_LLM_DECLARE_ATTENTION_ROWS

} // namespace llm
} // namespace extension
} // namespace executorch
