#include <executorch/extension/llm/runner/text_llm_runner.h>

#include <algorithm>

#include <executorch/extension/llm/sampler/sampler.h>
#include <executorch/extension/llm/tokenizers/bpe.h>
#include <executorch/runtime/core/exec_aten/exec_aten.h>
#include <executorch/runtime/core/portable_type/half.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace extension {
namespace llm {

using ::executorch::aten::ScalarType;
using ::executorch::aten::Tensor;
using ::executorch::aten::TensorImpl;
using ::executorch::runtime::Error;
using ::executorch::runtime::EValue;
using ::executorch::runtime::MethodMeta;
using ::executorch::runtime::Result;
using ::executorch::runtime::TensorShapeDynamism;

int32_t GenerationConfig::resolve_max_new_tokens(
    int64_t max_context_len, int64_t num_tokens_occupied) const {
  int64_t room = max_context_len - num_tokens_occupied;
  int64_t result = room;
  if (seq_len != -1) {
    result = std::min<int64_t>(seq_len, max_context_len) - num_tokens_occupied;
  }
  if (max_new_tokens != -1) {
    result = std::min<int64_t>(result, max_new_tokens);
  }
  return static_cast<int32_t>(std::max<int64_t>(0, result));
}

TextLLMRunner::TextLLMRunner(std::string model_path,
                             std::string tokenizer_path,
                             std::string data_path)
    : model_path_(std::move(model_path)),
      tokenizer_path_(std::move(tokenizer_path)),
      data_path_(std::move(data_path)) {}

Error TextLLMRunner::fail(Error error, const std::string& message) {
  last_error_ = message;
  ET_LOG(Error, "%s", message.c_str());
  return error;
}

Error TextLLMRunner::load() {
  if (loaded_) {
    return Error::Ok;
  }
  stats_.model_load_start_ms = time_in_ms();
  if (!data_path_.empty()) {
    return fail(Error::NotSupported,
                "A separate weights file (" + data_path_ +
                    ") is not supported by this runner yet");
  }
  std::string message;
  auto tokenizer = load_tokenizer(tokenizer_path_, &message);
  if (!tokenizer.ok()) {
    return fail(tokenizer.error(), "Loading the tokenizer failed: " + message);
  }
  tokenizer_ = std::move(*tokenizer);
  // Memory-mapped: the weights are paged in as the kernels touch them.
  module_ = std::make_unique<Module>(model_path_, Module::LoadMode::Mmap);
  Error error = module_->load();
  if (error != Error::Ok) {
    return fail(error,
                "Loading the program " + model_path_ + " failed (error " +
                    std::to_string(static_cast<int>(error)) + ")");
  }
  error = read_metadata();
  if (error != Error::Ok) {
    return error;
  }
  Result<::executorch::runtime::Method*> forward = module_->method("forward");
  if (!forward.ok()) {
    return fail(forward.error(),
                "Loading method 'forward' of " + model_path_ +
                    " failed (error " +
                    std::to_string(static_cast<int>(forward.error())) + ")");
  }
  forward_ = *forward;

  stop_tokens_.clear();
  stop_tokens_.insert(tokenizer_->stop_tokens().begin(),
                      tokenizer_->stop_tokens().end());
  stop_tokens_.insert(metadata_.eos_ids.begin(), metadata_.eos_ids.end());
  // One more than the context: the last sampled token is kept until the
  // next call feeds it.
  tokens_.assign(metadata_.max_context_len + 1, 0);
  input_tokens_.assign(metadata_.max_seq_len, 0);
  input_positions_.assign(metadata_.max_seq_len, 0);
  logits_.assign(metadata_.vocab_size, 0.0f);
  piece_.reserve(256);
  pending_text_.reserve(256);
  loaded_ = true;
  stats_.model_load_end_ms = time_in_ms();
  return Error::Ok;
}

Error TextLLMRunner::read_metadata() {
  Result<std::unordered_set<std::string>> names = module_->method_names();
  if (!names.ok() || names->count("forward") == 0) {
    return fail(Error::InvalidProgram,
                model_path_ + " has no method 'forward'");
  }
  // A constant method's outputs as integers (bools count as 0/1).
  auto read_ints = [&](const char* name,
                       std::vector<int64_t>* values) -> Result<bool> {
    if (names->count(name) == 0) {
      return false;
    }
    auto outputs = module_->execute(name);
    if (!outputs.ok()) {
      fail(outputs.error(),
           std::string("Running metadata method '") + name + "' failed");
      return outputs.error();
    }
    values->clear();
    for (const EValue& value : *outputs) {
      if (value.isInt()) {
        values->push_back(value.toInt());
      } else if (value.isBool()) {
        values->push_back(value.toBool() ? 1 : 0);
      } else {
        fail(Error::InvalidProgram,
             std::string("Metadata method '") + name +
                 "' returned a non-integer value");
        return Error::InvalidProgram;
      }
    }
    if (values->empty()) {
      fail(Error::InvalidProgram,
           std::string("Metadata method '") + name + "' returned nothing");
      return Error::InvalidProgram;
    }
    return true;
  };

  Result<MethodMeta> meta = module_->method_meta("forward");
  if (!meta.ok()) {
    return fail(meta.error(), "Reading forward's signature failed");
  }
  auto tokens_info = meta->input_tensor_meta(0);
  if (meta->num_inputs() < 1 || !tokens_info.ok() ||
      tokens_info->scalar_type() != ScalarType::Long ||
      tokens_info->sizes().size() != 2) {
    return fail(Error::InvalidProgram,
                "forward's first input must be the int64 tokens [1, n]");
  }
  auto logits_info = meta->output_tensor_meta(0);
  if (!logits_info.ok() || logits_info->sizes().empty()) {
    return fail(Error::InvalidProgram,
                "forward's first output must be the logits tensor");
  }

  // Inferred from forward's signature; the metadata methods override.
  metadata_ = ModelMetadata();
  metadata_.max_seq_len = tokens_info->sizes()[1];
  metadata_.enable_dynamic_shape =
      tokens_info->shape_dynamism() != TensorShapeDynamism::STATIC;
  metadata_.use_kv_cache = meta->num_inputs() >= 2;
  metadata_.vocab_size = logits_info->sizes().back();

  std::vector<int64_t> values;
  struct Entry {
    const char* name;
    int64_t* target;
  };
  int64_t context_len = -1, use_kv_cache = -1, dynamic = -1;
  for (const Entry& entry : {Entry{"get_max_seq_len", &metadata_.max_seq_len},
                             Entry{"get_max_context_len", &context_len},
                             Entry{"get_vocab_size", &metadata_.vocab_size},
                             Entry{"use_kv_cache", &use_kv_cache},
                             Entry{"enable_dynamic_shape", &dynamic},
                             Entry{"get_bos_id", &metadata_.bos_id}}) {
    Result<bool> found = read_ints(entry.name, &values);
    if (!found.ok()) {
      return found.error();
    }
    if (*found) {
      *entry.target = values[0];
    }
  }
  Result<bool> found = read_ints("get_eos_ids", &values);
  if (!found.ok()) {
    return found.error();
  }
  if (*found) {
    metadata_.eos_ids.assign(values.begin(), values.end());
  }
  if (use_kv_cache != -1)
    metadata_.use_kv_cache = use_kv_cache != 0;
  if (dynamic != -1)
    metadata_.enable_dynamic_shape = dynamic != 0;
  metadata_.max_context_len = context_len > 0 && metadata_.use_kv_cache
                                  ? context_len
                                  : metadata_.max_seq_len;
  if (metadata_.use_kv_cache) {
    auto positions = meta->input_tensor_meta(1);
    if (!positions.ok() || positions->scalar_type() != ScalarType::Long ||
        positions->sizes().size() != 1) {
      return fail(Error::InvalidProgram,
                  "forward's second input must be the int64 positions: [1] "
                  "(start position) or [n] (one per token)");
    }
    positions_per_token_ =
        positions->shape_dynamism() != TensorShapeDynamism::STATIC ||
        positions->sizes()[0] > 1;
  }
  if (metadata_.max_seq_len <= 0 || metadata_.max_context_len <= 0 ||
      metadata_.vocab_size <= 0) {
    return fail(Error::InvalidProgram,
                "Implausible model metadata: max_seq_len " +
                    std::to_string(metadata_.max_seq_len) + ", context " +
                    std::to_string(metadata_.max_context_len) + ", vocab " +
                    std::to_string(metadata_.vocab_size));
  }
  ET_LOG(Info,
         "Model: max_seq_len %lld, max_context_len %lld, vocab %lld, "
         "kv cache %d, dynamic shape %d",
         (long long)metadata_.max_seq_len,
         (long long)metadata_.max_context_len,
         (long long)metadata_.vocab_size,
         (int)metadata_.use_kv_cache,
         (int)metadata_.enable_dynamic_shape);
  return Error::Ok;
}

Error TextLLMRunner::run_forward(int64_t begin, int64_t count) {
  // Static token inputs (without a KV cache) take the sequence padded to
  // their length; causal attention keeps the padding out of the real
  // positions' logits.
  const bool pad = !metadata_.use_kv_cache && !metadata_.enable_dynamic_shape;
  const int64_t fed = pad ? metadata_.max_seq_len : count;
  std::copy(tokens_.begin() + begin,
            tokens_.begin() + begin + count,
            input_tokens_.begin());
  std::fill(input_tokens_.begin() + count, input_tokens_.begin() + fed, 0);

  TensorImpl::SizesType token_sizes[2] = {1, static_cast<int32_t>(fed)};
  TensorImpl::DimOrderType token_dim_order[2] = {0, 1};
  TensorImpl::StridesType token_strides[2] = {static_cast<int32_t>(fed), 1};
  TensorImpl token_impl(ScalarType::Long,
                        2,
                        token_sizes,
                        input_tokens_.data(),
                        token_dim_order,
                        token_strides);
  Error error = forward_->set_input(EValue(Tensor(&token_impl)), 0);
  if (error != Error::Ok) {
    return fail(
        error,
        "Setting forward's tokens [1, " + std::to_string(fed) + "] failed");
  }
  if (metadata_.use_kv_cache) {
    const int64_t num_positions = positions_per_token_ ? count : 1;
    for (int64_t i = 0; i < num_positions; ++i) {
      input_positions_[i] = begin + i;
    }
    TensorImpl::SizesType pos_sizes[1] = {static_cast<int32_t>(num_positions)};
    TensorImpl::DimOrderType pos_dim_order[1] = {0};
    TensorImpl::StridesType pos_strides[1] = {1};
    TensorImpl pos_impl(ScalarType::Long,
                        1,
                        pos_sizes,
                        input_positions_.data(),
                        pos_dim_order,
                        pos_strides);
    error = forward_->set_input(EValue(Tensor(&pos_impl)), 1);
    if (error != Error::Ok) {
      return fail(error,
                  "Setting forward's positions [" +
                      std::to_string(num_positions) + "] failed");
    }
  }
  const int64_t start = time_in_ms();
  error = forward_->execute();
  stats_.aggregate_model_execution_time_ms += time_in_ms() - start;
  if (error != Error::Ok) {
    return fail(error,
                "Running forward at position " + std::to_string(begin) +
                    " failed (error " +
                    std::to_string(static_cast<int>(error)) + ")");
  }

  const EValue& output = forward_->get_output(0);
  if (!output.isTensor()) {
    return fail(Error::InvalidProgram,
                "forward's first output is not a tensor");
  }
  const Tensor logits = output.toTensor();
  const int64_t vocab = logits.size(logits.dim() - 1);
  if (vocab != metadata_.vocab_size) {
    return fail(Error::InvalidProgram,
                "forward returned logits over " + std::to_string(vocab) +
                    " tokens, the metadata says " +
                    std::to_string(metadata_.vocab_size));
  }
  // [1, vocab] holds the last position only; [1, n, vocab] every position.
  const int64_t rows = logits.numel() / vocab;
  const int64_t row = rows == 1 ? 0 : count - 1;
  if (row >= rows) {
    return fail(Error::InvalidProgram,
                "forward returned fewer logits rows (" + std::to_string(rows) +
                    ") than tokens fed");
  }
  switch (logits.scalar_type()) {
    case ScalarType::Float: {
      const float* data = logits.const_data_ptr<float>() + row * vocab;
      std::copy(data, data + vocab, logits_.begin());
      break;
    }
    case ScalarType::Half: {
      const auto* data =
          logits.const_data_ptr<::executorch::runtime::etensor::Half>() +
          row * vocab;
      std::copy(data, data + vocab, logits_.begin());
      break;
    }
    case ScalarType::BFloat16: {
      const auto* data =
          logits.const_data_ptr<::executorch::runtime::etensor::BFloat16>() +
          row * vocab;
      std::copy(data, data + vocab, logits_.begin());
      break;
    }
    default:
      return fail(Error::InvalidProgram,
                  "forward's logits have dtype " +
                      std::to_string(static_cast<int>(logits.scalar_type())) +
                      "; Float, Half or BFloat16 expected");
  }
  return Error::Ok;
}

Error TextLLMRunner::run_tokens(int64_t begin, int64_t end) {
  if (!metadata_.use_kv_cache) {
    // Without a cache every step recomputes the whole sequence.
    return run_forward(0, end);
  }
  const int64_t chunk =
      metadata_.enable_dynamic_shape ? metadata_.max_seq_len : 1;
  for (int64_t pos = begin; pos < end; pos += chunk) {
    Error error = run_forward(pos, std::min(chunk, end - pos));
    if (error != Error::Ok) {
      return error;
    }
  }
  return Error::Ok;
}

Error TextLLMRunner::encode_and_prefill(const std::string& prompt,
                                        const GenerationConfig& config) {
  std::vector<uint64_t> ids;
  try {
    ids = tokenizer_->encode(prompt, config.num_bos, config.num_eos);
  } catch (const TokenizerError& e) {
    return fail(Error::InvalidArgument,
                std::string("Encoding the prompt: ") + e.what());
  }
  stats_.token_encode_end_ms = time_in_ms();
  const int64_t fed = num_fed_;
  const int64_t total = num_tokens_ + static_cast<int64_t>(ids.size());
  if (total - fed == 0) {
    return fail(Error::InvalidArgument, "The prompt is empty");
  }
  if (total >= metadata_.max_context_len) {
    return fail(Error::InvalidArgument,
                "The prompt needs " + std::to_string(total) +
                    " positions with the context so far; the model holds " +
                    std::to_string(metadata_.max_context_len) +
                    " (one must stay free for the reply)");
  }
  for (uint64_t id : ids) {
    if (id >= static_cast<uint64_t>(metadata_.vocab_size)) {
      return fail(Error::InvalidArgument,
                  "Prompt token " + std::to_string(id) +
                      " is beyond the model's vocabulary of " +
                      std::to_string(metadata_.vocab_size));
    }
    tokens_[num_tokens_++] = static_cast<int64_t>(id);
  }
  stats_.num_prompt_tokens = static_cast<int64_t>(ids.size());
  stats_.model_execution_start_ms = time_in_ms();
  Error error = run_tokens(fed, num_tokens_);
  if (error != Error::Ok) {
    num_tokens_ = fed; // the failed prompt is not part of the context
    return error;
  }
  num_fed_ = num_tokens_;
  return Error::Ok;
}

Error TextLLMRunner::prefill(const std::string& prompt,
                             const GenerationConfig& config) {
  Error error = load();
  if (error != Error::Ok) {
    return error;
  }
  stats_.inference_start_ms = time_in_ms();
  return encode_and_prefill(prompt, config);
}

void TextLLMRunner::emit(
    uint64_t prev,
    uint64_t token,
    const std::function<void(const std::string&)>& on_token) {
  piece_.clear();
  tokenizer_->decode_append(prev, token, &piece_);
  pending_text_.append(piece_);
  // Hold back a UTF-8 character whose last bytes have not come yet.
  size_t complete = pending_text_.size();
  for (size_t back = 1; back <= std::min<size_t>(3, pending_text_.size());
       ++back) {
    const unsigned char byte = pending_text_[pending_text_.size() - back];
    if ((byte & 0xC0) != 0x80) { // the last character's lead byte
      if (utf8_char_length(byte) > back) {
        complete = pending_text_.size() - back;
      }
      break;
    }
  }
  if (complete == 0) {
    return;
  }
  piece_.assign(pending_text_, 0, complete);
  pending_text_.erase(0, complete);
  if (on_token) {
    on_token(piece_);
  }
}

Error TextLLMRunner::generate(const std::string& prompt,
                              const GenerationConfig& config,
                              std::function<void(const std::string&)> on_token,
                              std::function<void(const Stats&)> on_stats) {
  Error error = load();
  if (error != Error::Ok) {
    return error;
  }
  stop_requested_ = false;
  stats_.reset();
  stats_.inference_start_ms = time_in_ms();
  if (config.echo && on_token) {
    on_token(prompt);
  }
  error = encode_and_prefill(prompt, config);
  if (error != Error::Ok) {
    return error;
  }
  stats_.prompt_eval_end_ms = time_in_ms();

  const int32_t max_new_tokens =
      config.resolve_max_new_tokens(metadata_.max_context_len, num_tokens_);
  Sampler sampler(static_cast<int32_t>(metadata_.vocab_size),
                  config.temperature,
                  config.topp,
                  config.seed);
  uint64_t prev = static_cast<uint64_t>(tokens_[num_tokens_ - 1]);
  pending_text_.clear();
  for (int32_t generated = 0; generated < max_new_tokens; ++generated) {
    stats_.on_sampling_begin();
    const uint64_t next = static_cast<uint64_t>(sampler.sample(logits_.data()));
    stats_.on_sampling_end();
    if (generated == 0) {
      stats_.first_token_ms = time_in_ms();
    }
    ++stats_.num_generated_tokens;
    if (!config.ignore_eos && stop_tokens_.count(next) != 0) {
      break;
    }
    try {
      emit(prev, next, on_token);
    } catch (const TokenizerError& e) {
      return fail(Error::InvalidArgument,
                  std::string("Decoding a generated token: ") + e.what());
    }
    tokens_[num_tokens_++] = static_cast<int64_t>(next);
    prev = next;
    if (generated + 1 == max_new_tokens || stop_requested_) {
      break; // the last token is fed by the next call, if any
    }
    error = run_tokens(num_fed_, num_tokens_);
    if (error != Error::Ok) {
      return error;
    }
    num_fed_ = num_tokens_;
  }
  if (!pending_text_.empty() && on_token) {
    on_token(pending_text_); // an unfinished character, as it is
    pending_text_.clear();
  }
  stats_.inference_end_ms = time_in_ms();
  stats_.model_execution_end_ms = stats_.inference_end_ms;
  stats_.peak_rss_bytes = peak_rss_bytes();
  if (on_stats && !config.warming) {
    on_stats(stats_);
  }
  return Error::Ok;
}

Error TextLLMRunner::warmup(const std::string& prompt, int32_t max_new_tokens) {
  GenerationConfig config;
  config.echo = false;
  config.warming = true;
  config.max_new_tokens = max_new_tokens;
  config.temperature = 0;
  Error error = generate(prompt, config);
  reset();
  return error;
}

void TextLLMRunner::reset() {
  num_tokens_ = 0;
  num_fed_ = 0;
  pending_text_.clear();
  stats_.reset();
}

} // namespace llm
} // namespace extension
} // namespace executorch
