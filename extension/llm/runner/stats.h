// Stats of one generation: the timestamps upstream's runner reports (in
// milliseconds, so its JSON line reads the same), token counts, and the
// process's peak resident memory.
#pragma once

#include <cstdint>
#include <string>

namespace executorch {
namespace extension {
namespace llm {

struct Stats {
  static constexpr int64_t SCALING_FACTOR_UNITS_PER_SECOND = 1000;

  int64_t model_load_start_ms = 0;
  int64_t model_load_end_ms = 0;
  int64_t inference_start_ms = 0;
  int64_t token_encode_end_ms = 0;
  int64_t model_execution_start_ms = 0;
  int64_t model_execution_end_ms = 0;
  int64_t prompt_eval_end_ms = 0;
  int64_t first_token_ms = 0;
  int64_t inference_end_ms = 0;
  int64_t aggregate_sampling_time_ms = 0;
  int64_t aggregate_model_execution_time_ms = 0;
  int64_t num_prompt_tokens = 0;
  int64_t num_generated_tokens = 0;
  // Peak resident set size of the process so far (getrusage), in bytes.
  int64_t peak_rss_bytes = 0;

  // Start and end of one sampling call (accumulated in
  // aggregate_sampling_time_ms).
  void on_sampling_begin();
  void on_sampling_end();
  // Clears the per-generation fields; with `all_stats`, the load times too.
  void reset(bool all_stats = false);

  double prefill_tokens_per_second() const;
  double decode_tokens_per_second() const;

  // One JSON object with every field and the two rates.
  std::string to_json_string() const;
  // A human-readable report (load time, prefill and decode rates, RSS).
  std::string report() const;

 private:
  int64_t sampling_start_ms_ = 0;
};

// Milliseconds of a monotonic clock.
int64_t time_in_ms();

// Peak resident set size of this process, in bytes.
int64_t peak_rss_bytes();

} // namespace llm
} // namespace extension
} // namespace executorch
