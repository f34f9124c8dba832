// TextLLMRunner: generates text with a decoder-only language model exported
// to a .pte (upstream's export_llama and Hugging Face exports alike) and a
// tokenizer: encodes the prompt, prefills it, then decodes token by token
// until a stop token or the length limit, streaming the text.
//
// What the model is comes from its constant methods, as upstream's runner
// reads them: get_max_seq_len, get_max_context_len, get_vocab_size,
// get_bos_id, get_eos_ids, use_kv_cache, enable_dynamic_shape (absent ones
// are inferred from forward's inputs). With a KV cache, forward takes
// (tokens [1, n], positions [1] or [n]) and the prompt goes in one call when
// the tokens' length is dynamic, else one token per call. Without one,
// forward takes the whole sequence each step (padded to its static length
// when it is not dynamic) and the logits of its last real position are used.
//
// Memory: the program is memory-mapped (pages are read when touched), the
// KV cache and activations are planned once at load, and the decode loop
// allocates nothing per token (token buffers, logits scratch and the
// sampler's work space are sized at load).
//
// A runner belongs to one thread; stop() may be called from another.
// Tested by test/llm/test_runner.py (greedy output equal to eager, from
// Python and from llama_main).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include <executorch/extension/llm/runner/stats.h>
#include <executorch/extension/llm/tokenizers/tokenizer.h>
#include <executorch/extension/module/module.h>

namespace executorch {
namespace extension {
namespace llm {

struct GenerationConfig {
  // Print (pass to the token callback) the prompt before the new text.
  bool echo = true;
  // At most this many new tokens (-1: as many as seq_len and the context
  // allow).
  int32_t max_new_tokens = -1;
  // A warm-up run: the stats are not reported.
  bool warming = false;
  // At most this many tokens in all, prompt included (-1: the context).
  int32_t seq_len = -1;
  // 0 decodes greedily.
  float temperature = 0.8f;
  // Nucleus sampling threshold in (0, 1].
  float topp = 0.9f;
  // Seed of the sampler's generator.
  uint64_t seed = 42;
  // BOS / EOS tokens to add around the prompt.
  int32_t num_bos = 0;
  int32_t num_eos = 0;
  // Keep generating past stop tokens (benchmarks).
  bool ignore_eos = false;

  // How many tokens to generate when `num_tokens_occupied` positions of a
  // `max_context_len` context are used (upstream's rule; never negative).
  int32_t resolve_max_new_tokens(int64_t max_context_len,
                                 int64_t num_tokens_occupied) const;
};

// What the runner read from (or inferred about) the model.
struct ModelMetadata {
  int64_t max_seq_len = 128;     // longest single forward call
  int64_t max_context_len = 128; // positions the KV cache holds
  int64_t vocab_size = -1;
  bool use_kv_cache = true;
  bool enable_dynamic_shape = false;
  std::vector<uint64_t> eos_ids; // from get_eos_ids
  int64_t bos_id = -1;           // from get_bos_id
};

class TextLLMRunner {
 public:
  // The model and tokenizer are read by load() (or the first generate()).
  // `data_path` names a .ptd with the weights when they are outside the
  // .pte (empty: none).
  TextLLMRunner(std::string model_path,
                std::string tokenizer_path,
                std::string data_path = "");

  // Loads the tokenizer, the program (memory-mapped) and forward, and reads
  // the metadata. Errors are logged and kept in last_error().
  ::executorch::runtime::Error load();
  bool is_loaded() const {
    return loaded_;
  }

  // Generates from `prompt`, continuing after what earlier calls (or
  // prefill()) left in the context; reset() starts over. `on_token`
  // receives the text as it is produced (whole UTF-8 characters),
  // `on_stats` the stats at the end.
  ::executorch::runtime::Error generate(
      const std::string& prompt,
      const GenerationConfig& config,
      std::function<void(const std::string&)> on_token = {},
      std::function<void(const Stats&)> on_stats = {});

  // Adds `prompt` to the context without generating (e.g. chat history).
  ::executorch::runtime::Error prefill(const std::string& prompt,
                                       const GenerationConfig& config);

  // A short generation that is not reported, so that timings exclude the
  // first run's page faults and kernel set-up.
  ::executorch::runtime::Error warmup(const std::string& prompt,
                                      int32_t max_new_tokens);

  // Makes a running generate() return after the current token.
  void stop() {
    stop_requested_ = true;
  }
  // Empties the context (the next generate starts at position 0) and the
  // stats of the last generation.
  void reset();

  const Stats& stats() const {
    return stats_;
  }
  const ModelMetadata& metadata() const {
    return metadata_;
  }
  const Tokenizer* tokenizer() const {
    return tokenizer_.get();
  }
  // The tokens in the context: prompts and generated tokens so far.
  std::vector<int64_t> context_tokens() const {
    return std::vector<int64_t>(tokens_.begin(), tokens_.begin() + num_tokens_);
  }
  // What the last failing call found wrong.
  const std::string& last_error() const {
    return last_error_;
  }

 private:
  ::executorch::runtime::Error fail(::executorch::runtime::Error error,
                                    const std::string& message);
  ::executorch::runtime::Error read_metadata();
  // Feeds tokens_[begin, end) to the model; logits_ then holds the logits
  // of position end - 1.
  ::executorch::runtime::Error run_tokens(int64_t begin, int64_t end);
  ::executorch::runtime::Error run_forward(int64_t begin, int64_t count);
  ::executorch::runtime::Error encode_and_prefill(
      const std::string& prompt, const GenerationConfig& config);
  // Streams the bytes of `token` to `on_token`, holding back an incomplete
  // UTF-8 character until the next tokens complete it.
  void emit(uint64_t prev,
            uint64_t token,
            const std::function<void(const std::string&)>& on_token);

  std::string model_path_;
  std::string tokenizer_path_;
  std::string data_path_;
  bool loaded_ = false;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<Module> module_;
  ::executorch::runtime::Method* forward_ = nullptr;
  ModelMetadata metadata_;
  std::unordered_set<uint64_t> stop_tokens_;
  // Whether forward's positions input takes one start position or one
  // position per token.
  bool positions_per_token_ = false;

  // The context's tokens, and the input buffers forward reads, sized at
  // load.
  std::vector<int64_t> tokens_;
  std::vector<int64_t> input_tokens_;
  std::vector<int64_t> input_positions_;
  std::vector<float> logits_;
  int64_t num_tokens_ = 0;   // tokens in the context
  int64_t num_fed_ = 0;      // of which the model has seen (the KV cache)
  std::string pending_text_; // bytes of an unfinished UTF-8 character
  std::string piece_;        // scratch for one token's bytes

  Stats stats_;
  std::atomic<bool> stop_requested_{false};
  std::string last_error_;
};

} // namespace llm
} // namespace extension
} // namespace executorch
