// Sampler: picks the next token from a row of logits. Temperature 0 takes
// the argmax (greedy); otherwise softmax(logits / temperature), then top-p
// (nucleus) sampling from a seeded generator, so a seed reproduces a run.
//
// All working memory is allocated at construction: sample() allocates
// nothing. A Sampler holds the generator's state, so it belongs to one
// thread. Tested by test/llm/test_runner.py (greedy against eager argmax,
// seeded runs reproducible, top-p restricting the candidates).
#pragma once

#include <cstdint>
#include <vector>

namespace executorch {
namespace extension {
namespace llm {

class Sampler {
 public:
  // `topp` in (0, 1]: sample among the most likely tokens whose
  // probabilities add up to at least `topp` (1 samples from all).
  Sampler(int32_t vocab_size, float temperature, float topp, uint64_t seed);

  // The token for `logits` (vocab_size values, any scale). Greedy ties go
  // to the lowest id, as torch.argmax.
  int32_t sample(const float* logits);

  int32_t vocab_size() const {
    return vocab_size_;
  }

 private:
  // Uniform in [0, 1) from xorshift64*.
  float next_uniform();
  int32_t sample_top_p(float coin);

  struct Candidate {
    float probability;
    int32_t index;
  };

  int32_t vocab_size_;
  float inverse_temperature_;
  float topp_;
  uint64_t state_;
  std::vector<float> probabilities_;
  std::vector<Candidate> candidates_;
};

} // namespace llm
} // namespace extension
} // namespace executorch
