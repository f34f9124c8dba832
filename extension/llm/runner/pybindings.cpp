// _llm_runner: Python bindings of the LLM extension, the surface of
// upstream's executorch.extension.llm.runner (see __init__.py) plus the
// tokenizers. Errors raise RuntimeError with the message the C++ side
// produced (which file, field or line was wrong).

#include <optional>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <pybind11/functional.h>

#include <executorch/extension/llm/runner/register_libraries.h>
#include <executorch/extension/llm/runner/text_llm_runner.h>
#include <executorch/extension/llm/tokenizers/tokenizer.h>

namespace py = pybind11;
using ::executorch::extension::llm::GenerationConfig;
using ::executorch::extension::llm::Stats;
using ::executorch::extension::llm::TextLLMRunner;
using ::executorch::extension::llm::Tokenizer;
using ::executorch::extension::llm::TokenizerError;

namespace {

std::shared_ptr<Tokenizer> load_tokenizer_or_raise(const std::string& path) {
  std::string message;
  auto tokenizer = ::executorch::extension::llm::load_tokenizer(path, &message);
  if (!tokenizer.ok()) {
    throw std::runtime_error("Loading the tokenizer failed: " + message);
  }
  return std::shared_ptr<Tokenizer>(std::move(*tokenizer));
}

void check(::executorch::runtime::Error error,
           const TextLLMRunner& runner,
           const char* what) {
  if (error != ::executorch::runtime::Error::Ok) {
    throw std::runtime_error(std::string(what) +
                             " failed: " + runner.last_error());
  }
}

// Text from the C++ side as str; bytes that are not UTF-8 become U+FFFD.
py::str to_str(const std::string& text) {
  return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(
      text.data(), static_cast<Py_ssize_t>(text.size()), "replace"));
}

} // namespace

PYBIND11_MODULE(_llm_runner, m) {
  m.doc() = "Bindings of the LLM extension: tokenizers and the text runner.";
  if (::executorch::extension::llm::register_runner_libraries() !=
      ::executorch::runtime::Error::Ok) {
    throw std::runtime_error(
        "Registering the kernels for the LLM runner failed");
  }
  py::register_exception<TokenizerError>(
      m, "TokenizerError", PyExc_RuntimeError);

  py::class_<Tokenizer, std::shared_ptr<Tokenizer>>(
      m,
      "Tokenizer",
      "A tokenizer loaded by load_tokenizer (tokenizer.json, SentencePiece "
      ".model or tiktoken ranks).")
      .def("encode",
           &Tokenizer::encode,
           py::arg("text"),
           py::arg("bos") = 0,
           py::arg("eos") = 0,
           "The ids of `text` after `bos` BOS and before `eos` EOS tokens.")
      .def(
          "decode",
          [](const Tokenizer& t, uint64_t prev, uint64_t token) {
            return py::bytes(t.decode(prev, token));
          },
          py::arg("prev"),
          py::arg("token"),
          "The bytes `token` adds after `prev` (may be part of a UTF-8 "
          "character).")
      .def(
          "decode_all",
          [](const Tokenizer& t,
             const std::vector<uint64_t>& ids,
             bool skip_special) {
            return to_str(t.decode_all(ids, skip_special));
          },
          py::arg("ids"),
          py::arg("skip_special_tokens") = false,
          "The text of a sequence of ids (invalid UTF-8 becomes U+FFFD).")
      .def("is_special", &Tokenizer::is_special, py::arg("token"))
      .def_property_readonly("vocab_size", &Tokenizer::vocab_size)
      .def_property_readonly("bos_id", &Tokenizer::bos_tok)
      .def_property_readonly("eos_id", &Tokenizer::eos_tok)
      .def_property_readonly("stop_tokens", &Tokenizer::stop_tokens);

  m.def("load_tokenizer",
        &load_tokenizer_or_raise,
        py::arg("path"),
        "Loads a tokenizer.json (or a directory with one), a SentencePiece "
        "model or a tiktoken ranks file (Llama 3's pattern and special "
        "tokens).");

  py::class_<GenerationConfig>(
      m, "GenerationConfig", "Configuration for text generation.")
      .def(py::init([](bool echo,
                       int32_t max_new_tokens,
                       bool warming,
                       int32_t seq_len,
                       float temperature,
                       float topp,
                       uint64_t seed,
                       int32_t num_bos,
                       int32_t num_eos,
                       bool ignore_eos) {
             GenerationConfig c;
             c.echo = echo;
             c.max_new_tokens = max_new_tokens;
             c.warming = warming;
             c.seq_len = seq_len;
             c.temperature = temperature;
             c.topp = topp;
             c.seed = seed;
             c.num_bos = num_bos;
             c.num_eos = num_eos;
             c.ignore_eos = ignore_eos;
             return c;
           }),
           py::kw_only(),
           py::arg("echo") = true,
           py::arg("max_new_tokens") = -1,
           py::arg("warming") = false,
           py::arg("seq_len") = -1,
           py::arg("temperature") = 0.8f,
           py::arg("topp") = 0.9f,
           py::arg("seed") = 42,
           py::arg("num_bos") = 0,
           py::arg("num_eos") = 0,
           py::arg("ignore_eos") = false)
      .def_readwrite("echo", &GenerationConfig::echo)
      .def_readwrite("max_new_tokens", &GenerationConfig::max_new_tokens)
      .def_readwrite("warming", &GenerationConfig::warming)
      .def_readwrite("seq_len", &GenerationConfig::seq_len)
      .def_readwrite("temperature", &GenerationConfig::temperature)
      .def_readwrite("topp", &GenerationConfig::topp)
      .def_readwrite("seed", &GenerationConfig::seed)
      .def_readwrite("num_bos", &GenerationConfig::num_bos)
      .def_readwrite("num_eos", &GenerationConfig::num_eos)
      .def_readwrite("ignore_eos", &GenerationConfig::ignore_eos)
      .def("resolve_max_new_tokens",
           &GenerationConfig::resolve_max_new_tokens,
           py::arg("max_context_len"),
           py::arg("num_tokens_occupied"))
      .def("__repr__", [](const GenerationConfig& c) {
        return "GenerationConfig(max_new_tokens=" +
               std::to_string(c.max_new_tokens) +
               ", seq_len=" + std::to_string(c.seq_len) +
               ", temperature=" + std::to_string(c.temperature) +
               ", topp=" + std::to_string(c.topp) + ")";
      });

  py::class_<Stats>(m, "Stats", "Statistics of the last generation.")
      .def_readonly_static("SCALING_FACTOR_UNITS_PER_SECOND",
                           &Stats::SCALING_FACTOR_UNITS_PER_SECOND)
      .def_readwrite("model_load_start_ms", &Stats::model_load_start_ms)
      .def_readwrite("model_load_end_ms", &Stats::model_load_end_ms)
      .def_readwrite("inference_start_ms", &Stats::inference_start_ms)
      .def_readwrite("token_encode_end_ms", &Stats::token_encode_end_ms)
      .def_readwrite("model_execution_start_ms",
                     &Stats::model_execution_start_ms)
      .def_readwrite("model_execution_end_ms", &Stats::model_execution_end_ms)
      .def_readwrite("prompt_eval_end_ms", &Stats::prompt_eval_end_ms)
      .def_readwrite("first_token_ms", &Stats::first_token_ms)
      .def_readwrite("inference_end_ms", &Stats::inference_end_ms)
      .def_readwrite("aggregate_sampling_time_ms",
                     &Stats::aggregate_sampling_time_ms)
      .def_readwrite("aggregate_model_execution_time_ms",
                     &Stats::aggregate_model_execution_time_ms)
      .def_readwrite("num_prompt_tokens", &Stats::num_prompt_tokens)
      .def_readwrite("num_generated_tokens", &Stats::num_generated_tokens)
      .def_readwrite("peak_rss_bytes", &Stats::peak_rss_bytes)
      .def_property_readonly("prefill_tokens_per_second",
                             &Stats::prefill_tokens_per_second)
      .def_property_readonly("decode_tokens_per_second",
                             &Stats::decode_tokens_per_second)
      .def("on_sampling_begin", &Stats::on_sampling_begin)
      .def("on_sampling_end", &Stats::on_sampling_end)
      .def("reset", &Stats::reset, py::arg("all_stats") = false)
      .def("to_json_string", &Stats::to_json_string)
      .def("__repr__", &Stats::report);

  py::class_<TextLLMRunner>(
      m, "TextLLMRunner", "Runner for text language models.")
      .def(py::init([](const std::string& model_path,
                       const std::string& tokenizer_path,
                       std::optional<std::string> data_path) {
             auto runner = std::make_unique<TextLLMRunner>(
                 model_path, tokenizer_path, data_path.value_or(""));
             check(runner->load(), *runner, "Loading the runner");
             return runner;
           }),
           py::arg("model_path"),
           py::arg("tokenizer_path"),
           py::arg("data_path") = py::none())
      .def(
          "generate",
          [](TextLLMRunner& runner,
             const std::string& prompt,
             const GenerationConfig& config,
             std::optional<std::function<void(py::str)>> token_callback,
             std::optional<std::function<void(const Stats&)>> stats_callback) {
            std::function<void(const std::string&)> on_token;
            if (token_callback) {
              on_token = [&](const std::string& text) {
                py::gil_scoped_acquire gil;
                (*token_callback)(to_str(text));
              };
            }
            std::function<void(const Stats&)> on_stats;
            if (stats_callback) {
              on_stats = [&](const Stats& stats) {
                py::gil_scoped_acquire gil;
                (*stats_callback)(stats);
              };
            }
            ::executorch::runtime::Error error;
            {
              py::gil_scoped_release release;
              error = runner.generate(prompt, config, on_token, on_stats);
            }
            check(error, runner, "Generating");
          },
          py::arg("prompt"),
          py::arg("config"),
          py::arg("token_callback") = py::none(),
          py::arg("stats_callback") = py::none(),
          "Generates from `prompt`, streaming text to token_callback.")
      .def(
          "prefill",
          [](TextLLMRunner& runner,
             const std::string& prompt,
             const GenerationConfig& config) {
            ::executorch::runtime::Error error;
            {
              py::gil_scoped_release release;
              error = runner.prefill(prompt, config);
            }
            check(error, runner, "Prefilling");
          },
          py::arg("prompt"),
          py::arg("config"),
          "Adds `prompt` to the context without generating.")
      .def("stop", &TextLLMRunner::stop)
      .def("reset", &TextLLMRunner::reset)
      .def("get_vocab_size",
           [](const TextLLMRunner& r) { return r.metadata().vocab_size; })
      .def_property_readonly("stats", &TextLLMRunner::stats)
      .def_property_readonly("context_tokens",
                             &TextLLMRunner::context_tokens,
                             "The token ids in the context so far.")
      .def_property_readonly(
          "metadata",
          [](const TextLLMRunner& r) {
            const auto& m = r.metadata();
            py::dict d;
            d["get_max_seq_len"] = m.max_seq_len;
            d["get_max_context_len"] = m.max_context_len;
            d["get_vocab_size"] = m.vocab_size;
            d["use_kv_cache"] = m.use_kv_cache;
            d["enable_dynamic_shape"] = m.enable_dynamic_shape;
            d["get_eos_ids"] = m.eos_ids;
            return d;
          },
          "What the runner read from (or inferred about) the model.")
      .def("__repr__", [](const TextLLMRunner& r) {
        return "TextLLMRunner(vocab_size=" +
               std::to_string(r.metadata().vocab_size) + ")";
      });
}
