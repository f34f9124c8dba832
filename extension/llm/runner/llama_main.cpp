// llama_main: generates text with an exported LLM from the command line.
//
//   llama_main --model_path model.pte --tokenizer_path tokenizer.json
//              [--prompt "Once upon a time"] [--seq_len 128]
//              [--max_new_tokens N] [--temperature 0.8] [--topp 0.9]
//              [--seed 42] [--num_bos 0] [--num_eos 0] [--cpu_threads N]
//              [--warmup] [--ignore_eos] [--no_echo] [--stats_json]
//
// Flags take `--flag value` or `--flag=value`. The text streams to stdout;
// the stats (load time, prefill and decode tokens/s, peak RSS) go to
// stderr, with --stats_json as one JSON line prefixed "STATS ". Exit status
// 1 on a bad command line or a failure, with the reason on stderr.

#include <cstdio>
#include <cstdlib>
#include <string>

#include <executorch/extension/llm/runner/register_libraries.h>
#include <executorch/extension/llm/runner/text_llm_runner.h>
#ifdef EXECUTORCH_WITH_THREADPOOL
#include <executorch/extension/threadpool/threadpool.h>
#endif

namespace {

using ::executorch::extension::llm::GenerationConfig;
using ::executorch::extension::llm::Stats;
using ::executorch::extension::llm::TextLLMRunner;
using ::executorch::runtime::Error;

struct Options {
  std::string model_path;
  std::string tokenizer_path;
  std::string data_path;
  std::string prompt = "Once upon a time";
  GenerationConfig config;
  int cpu_threads = -1;
  bool warmup = false;
  bool stats_json = false;
};

void print_usage(const char* argv0) {
  std::fprintf(
      stderr,
      "usage: %s --model_path model.pte --tokenizer_path tokenizer\n"
      "          [--prompt text] [--seq_len 128] [--max_new_tokens -1]\n"
      "          [--temperature 0.8] [--topp 0.9] [--seed 42]\n"
      "          [--num_bos 0] [--num_eos 0] [--cpu_threads -1] [--warmup]\n"
      "          [--ignore_eos] [--no_echo] [--stats_json] [--data_path f]\n",
      argv0);
}

bool parse_number(const std::string& flag,
                  const std::string& text,
                  double* out) {
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') {
    std::fprintf(stderr,
                 "error: %s: '%s' is not a number\n",
                 flag.c_str(),
                 text.c_str());
    return false;
  }
  return true;
}

bool parse_options(int argc, char** argv, Options* options) {
  options->config.seq_len = 128;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    std::string value;
    bool has_value = false;
    size_t equals = flag.find('=');
    if (equals != std::string::npos) {
      value = flag.substr(equals + 1);
      flag = flag.substr(0, equals);
      has_value = true;
    }
    if (flag == "--help" || flag == "-h") {
      print_usage(argv[0]);
      std::exit(0);
    }
    if (flag == "--warmup" || flag == "--ignore_eos" || flag == "--no_echo" ||
        flag == "--stats_json") {
      bool on = !has_value || value == "true" || value == "1";
      if (flag == "--warmup")
        options->warmup = on;
      if (flag == "--ignore_eos")
        options->config.ignore_eos = on;
      if (flag == "--no_echo")
        options->config.echo = !on;
      if (flag == "--stats_json")
        options->stats_json = on;
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "error: %s needs a value\n", flag.c_str());
        return false;
      }
      value = argv[++i];
    }
    double number = 0;
    auto numeric = [&]() { return parse_number(flag, value, &number); };
    if (flag == "--model_path") {
      options->model_path = value;
    } else if (flag == "--tokenizer_path") {
      options->tokenizer_path = value;
    } else if (flag == "--data_path") {
      options->data_path = value;
    } else if (flag == "--prompt") {
      options->prompt = value;
    } else if (flag == "--seq_len" && numeric()) {
      options->config.seq_len = static_cast<int32_t>(number);
    } else if (flag == "--max_new_tokens" && numeric()) {
      options->config.max_new_tokens = static_cast<int32_t>(number);
    } else if (flag == "--temperature" && numeric()) {
      options->config.temperature = static_cast<float>(number);
    } else if (flag == "--topp" && numeric()) {
      options->config.topp = static_cast<float>(number);
    } else if (flag == "--seed" && numeric()) {
      options->config.seed = static_cast<uint64_t>(number);
    } else if (flag == "--num_bos" && numeric()) {
      options->config.num_bos = static_cast<int32_t>(number);
    } else if (flag == "--num_eos" && numeric()) {
      options->config.num_eos = static_cast<int32_t>(number);
    } else if (flag == "--cpu_threads" && numeric()) {
      options->cpu_threads = static_cast<int>(number);
    } else {
      std::fprintf(
          stderr, "error: unknown flag or bad value: %s\n", flag.c_str());
      print_usage(argv[0]);
      return false;
    }
  }
  if (options->model_path.empty() || options->tokenizer_path.empty()) {
    std::fprintf(stderr,
                 "error: --model_path and --tokenizer_path are required\n");
    print_usage(argv[0]);
    return false;
  }
  return true;
}

} // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse_options(argc, argv, &options)) {
    return 1;
  }
  if (::executorch::extension::llm::register_runner_libraries() != Error::Ok) {
    std::fprintf(stderr, "error: registering the kernels failed\n");
    return 1;
  }
#ifdef EXECUTORCH_WITH_THREADPOOL
  if (options.cpu_threads > 0) {
    ::executorch::extension::threadpool::get_threadpool()
        ->_unsafe_reset_threadpool(options.cpu_threads);
  }
#endif
  TextLLMRunner runner(
      options.model_path, options.tokenizer_path, options.data_path);
  if (runner.load() != Error::Ok) {
    std::fprintf(stderr, "error: %s\n", runner.last_error().c_str());
    return 1;
  }
  if (options.warmup && runner.warmup(options.prompt, 4) != Error::Ok) {
    std::fprintf(stderr, "error: warm-up: %s\n", runner.last_error().c_str());
    return 1;
  }
  Error error = runner.generate(
      options.prompt,
      options.config,
      [](const std::string& text) {
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);
      },
      [&](const Stats& stats) {
        std::fputs("\n", stdout);
        std::fputs(stats.report().c_str(), stderr);
        if (options.stats_json) {
          std::fprintf(stderr, "STATS %s\n", stats.to_json_string().c_str());
        }
      });
  if (error != Error::Ok) {
    std::fprintf(stderr, "error: %s\n", runner.last_error().c_str());
    return 1;
  }
  return 0;
}
