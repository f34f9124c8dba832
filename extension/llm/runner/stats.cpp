#include <executorch/extension/llm/runner/stats.h>

#include <sys/resource.h>
#include <chrono>
#include <cstdio>

namespace executorch {
namespace extension {
namespace llm {

int64_t time_in_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t peak_rss_bytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024; // Linux: kilobytes
}

void Stats::on_sampling_begin() {
  sampling_start_ms_ = time_in_ms();
}

void Stats::on_sampling_end() {
  aggregate_sampling_time_ms += time_in_ms() - sampling_start_ms_;
}

void Stats::reset(bool all_stats) {
  const int64_t load_start = model_load_start_ms;
  const int64_t load_end = model_load_end_ms;
  *this = Stats();
  if (!all_stats) {
    model_load_start_ms = load_start;
    model_load_end_ms = load_end;
  }
}

namespace {
double rate(int64_t tokens, int64_t milliseconds) {
  return milliseconds > 0 ? tokens * 1000.0 / milliseconds : 0.0;
}
} // namespace

double Stats::prefill_tokens_per_second() const {
  return rate(num_prompt_tokens, prompt_eval_end_ms - inference_start_ms);
}

double Stats::decode_tokens_per_second() const {
  // The first token comes out of the prefill; the decode steps make the
  // others.
  return rate(num_generated_tokens - 1, inference_end_ms - prompt_eval_end_ms);
}

std::string Stats::to_json_string() const {
  char buffer[1024];
  std::snprintf(
      buffer,
      sizeof(buffer),
      "{\"prompt_tokens\":%lld,\"generated_tokens\":%lld,"
      "\"model_load_start_ms\":%lld,\"model_load_end_ms\":%lld,"
      "\"inference_start_ms\":%lld,\"token_encode_end_ms\":%lld,"
      "\"model_execution_start_ms\":%lld,\"model_execution_end_ms\":%lld,"
      "\"prompt_eval_end_ms\":%lld,\"first_token_ms\":%lld,"
      "\"inference_end_ms\":%lld,\"aggregate_sampling_time_ms\":%lld,"
      "\"aggregate_model_execution_time_ms\":%lld,"
      "\"SCALING_FACTOR_UNITS_PER_SECOND\":%lld,\"peak_rss_bytes\":%lld,"
      "\"prefill_tokens_per_second\":%.3f,\"decode_tokens_per_second\":%.3f}",
      (long long)num_prompt_tokens,
      (long long)num_generated_tokens,
      (long long)model_load_start_ms,
      (long long)model_load_end_ms,
      (long long)inference_start_ms,
      (long long)token_encode_end_ms,
      (long long)model_execution_start_ms,
      (long long)model_execution_end_ms,
      (long long)prompt_eval_end_ms,
      (long long)first_token_ms,
      (long long)inference_end_ms,
      (long long)aggregate_sampling_time_ms,
      (long long)aggregate_model_execution_time_ms,
      (long long)SCALING_FACTOR_UNITS_PER_SECOND,
      (long long)peak_rss_bytes,
      prefill_tokens_per_second(),
      decode_tokens_per_second());
  return buffer;
}

std::string Stats::report() const {
  char buffer[768];
  std::snprintf(buffer,
                sizeof(buffer),
                "Model load time: %.3f s\n"
                "Prompt tokens: %lld, prefill: %.3f s (%.2f tokens/s)\n"
                "Generated tokens: %lld, decode: %.3f s (%.2f tokens/s)\n"
                "Time to first token: %.3f s, sampling: %.3f s\n"
                "Peak RSS: %.1f MiB\n",
                (model_load_end_ms - model_load_start_ms) / 1000.0,
                (long long)num_prompt_tokens,
                (prompt_eval_end_ms - inference_start_ms) / 1000.0,
                prefill_tokens_per_second(),
                (long long)num_generated_tokens,
                (inference_end_ms - prompt_eval_end_ms) / 1000.0,
                decode_tokens_per_second(),
                (first_token_ms - inference_start_ms) / 1000.0,
                aggregate_sampling_time_ms / 1000.0,
                peak_rss_bytes / (1024.0 * 1024.0));
  return buffer;
}

} // namespace llm
} // namespace extension
} // namespace executorch
