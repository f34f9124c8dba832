#include <executorch/extension/llm/sampler/sampler.h>

#include <algorithm>
#include <cmath>

namespace executorch {
namespace extension {
namespace llm {

Sampler::Sampler(int32_t vocab_size,
                 float temperature,
                 float topp,
                 uint64_t seed)
    : vocab_size_(vocab_size),
      inverse_temperature_(temperature > 0 ? 1.0f / temperature : 0.0f),
      topp_(topp),
      // xorshift needs a non-zero state.
      state_(seed == 0 ? 0x9E3779B97F4A7C15ull : seed),
      probabilities_(vocab_size),
      candidates_(vocab_size) {}

float Sampler::next_uniform() {
  state_ ^= state_ >> 12;
  state_ ^= state_ << 25;
  state_ ^= state_ >> 27;
  // The top 24 bits as a float in [0, 1).
  return static_cast<float>((state_ * 0x2545F4914F6CDD1Dull) >> 40) /
         16777216.0f;
}

int32_t Sampler::sample(const float* logits) {
  if (inverse_temperature_ == 0.0f) {
    return static_cast<int32_t>(std::max_element(logits, logits + vocab_size_) -
                                logits);
  }
  float max_logit = *std::max_element(logits, logits + vocab_size_);
  float sum = 0;
  for (int32_t i = 0; i < vocab_size_; ++i) {
    probabilities_[i] =
        std::exp((logits[i] - max_logit) * inverse_temperature_);
    sum += probabilities_[i];
  }
  for (float& p : probabilities_) {
    p /= sum;
  }
  float coin = next_uniform();
  if (topp_ > 0 && topp_ < 1) {
    return sample_top_p(coin);
  }
  float cumulative = 0;
  for (int32_t i = 0; i < vocab_size_; ++i) {
    cumulative += probabilities_[i];
    if (coin < cumulative) {
      return i;
    }
  }
  return vocab_size_ - 1; // rounding left the coin above the last sum
}

int32_t Sampler::sample_top_p(float coin) {
  // Tokens below (1 - topp) / (n - 1) cannot be in the nucleus: leaving them
  // out keeps the sort short.
  const float cutoff = (1.0f - topp_) / static_cast<float>(vocab_size_ - 1);
  size_t count = 0;
  for (int32_t i = 0; i < vocab_size_; ++i) {
    if (probabilities_[i] >= cutoff) {
      candidates_[count++] = Candidate{probabilities_[i], i};
    }
  }
  std::sort(candidates_.begin(),
            candidates_.begin() + count,
            [](const Candidate& a, const Candidate& b) {
              return a.probability > b.probability ||
                     (a.probability == b.probability && a.index < b.index);
            });
  if (count == 0) {
    return static_cast<int32_t>(
        std::max_element(probabilities_.begin(), probabilities_.end()) -
        probabilities_.begin());
  }
  // The smallest prefix whose probability reaches topp.
  size_t last = count - 1;
  float nucleus = 0;
  for (size_t i = 0; i < count; ++i) {
    nucleus += candidates_[i].probability;
    if (nucleus >= topp_) {
      last = i;
      break;
    }
  }
  float target = coin * nucleus;
  float cumulative = 0;
  for (size_t i = 0; i <= last; ++i) {
    cumulative += candidates_[i].probability;
    if (target < cumulative) {
      return candidates_[i].index;
    }
  }
  return candidates_[last].index;
}

} // namespace llm
} // namespace extension
} // namespace executorch
