// executor_runner: loads a .pte program, runs one of its methods a number of
// times with inputs of ones (or raw tensor files), and prints the time of each
// run and the outputs.
//
//   executor_runner --model_path model.pte [--data_path weights.ptd]
//                   [--method_name forward]
//                   [--num_executions N] [--inputs a.bin,b.bin]
//                   [--input_shapes "1,3,32,32;8"] [--print_output]
//
// --data_path names the .ptd file of a program exported with its constants
// or delegate weights outside the .pte (ExecutorchBackendConfig(
// external_constants=True), or weights tagged for a delegate).
//
// An input file holds the raw bytes of one tensor input, little-endian, laid
// out in the input's dim order (plain row-major for ordinary tensors); there
// is one file per tensor input, in input order. Flags take their value as
// `--flag value` or `--flag=value`.
//
// A program exported with dynamic shapes runs at the sizes --input_shapes
// gives (one shape per tensor input, in input order, separated by ';', each
// within the bounds the program was exported with); without it, every input
// takes the sizes stored in the program, which are the upper bounds.
//
// --etdump_path run.etdp profiles the load and every run into an ETDump
// (read it with executorch.devtools.Inspector or turn it into an HTML report
// with python -m executorch.devtools.report); --debug_output also logs the
// result of every instruction into a debug buffer (--debug_buffer_size
// bytes, 64 MiB by default) written to --debug_buffer_path (run.etdp.bin by
// default).
//
// --max_instructions N stops an execution after N instructions with an error
// naming the instruction (a loop in a program from an untrusted source that
// never ends); 0, the default, is no limit.
//
// A bundled program (.bpte, from executorch.devtools.BundledProgram) is
// recognized by its contents: each test case of the method runs with its
// bundled inputs and its outputs are checked against the expected ones
// (|actual - expected| <= atol + rtol * |expected|, --rtol and --atol,
// default 1e-5 each); a failing case prints its worst element and the exit
// code is 1.
//
// The runner is a command line over the extension API: extension/module's
// Module loads the program and the method (planned memory, allocators,
// buffers for unplanned outputs), extension/runner_util makes the inputs and
// extension/evalue_util prints the outputs.
//
// Kernels, the demo backend of upstream's delegation tutorials and the
// XNNPACK backend (when built with it) are registered
// explicitly at startup, so nothing depends on static initializers surviving
// the link. A build that links more kernel libraries (custom operators, see
// examples/custom_ops) defines EXECUTOR_RUNNER_EXTRA_KERNELS as the name of
// their registration function.

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <executorch/devtools/bundled_program/bundled_program.h>
#include <executorch/devtools/etdump/etdump_gen.h>
#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/extension/evalue_util/print_evalue.h>
#include <executorch/extension/memory_allocator/planned_memory.h>
#include <executorch/extension/module/module.h>
#include <executorch/extension/runner_util/inputs.h>
#ifdef EXECUTORCH_WITH_OPTIMIZED_KERNELS
#include <executorch/kernels/optimized/register_optimized_kernels.h>
#else
#include <executorch/kernels/portable/register_portable_kernels.h>
#endif
#include <executorch/kernels/quantized/register_quantized_kernels.h>
#ifdef EXECUTORCH_WITH_LLM_CUSTOM_OPS
#include <executorch/extension/llm/custom_ops/register_custom_ops.h>
#endif
#include <executorch/kernels/prim_ops/register_prim_ops.h>
#include <executorch/runtime/platform/runtime.h>
#include <executorch/backends/demo/runtime/demo_backend.h>
#ifdef EXECUTORCH_WITH_XNNPACK
#include <executorch/backends/xnnpack/runtime/register_xnnpack_backend.h>
#endif

using executorch::aten::Tensor;
using executorch::etdump::ETDumpGen;
using executorch::extension::BufferDataLoader;
using executorch::extension::FileDataLoader;
using executorch::extension::InputTensorSource;
using executorch::extension::Module;
using executorch::extension::PlannedMemory;
using executorch::extension::TensorPtr;
using executorch::runtime::DataLoader;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::Method;
using executorch::runtime::MethodMeta;
using executorch::runtime::Result;
using executorch::runtime::Span;
using executorch::runtime::Tag;

#ifdef EXECUTOR_RUNNER_EXTRA_KERNELS
Error EXECUTOR_RUNNER_EXTRA_KERNELS();
#endif

namespace {

// Values printed per output without --print_output.
constexpr size_t kPreviewValues = 8;

struct Options {
  std::string model_path = "model.pte";
  // The program's external data (.ptd); empty: none.
  std::string data_path;
  std::string method_name = "forward";
  long num_executions = 1;
  bool print_output = false;
  std::vector<std::string> input_files;
  // Sizes of each tensor input; empty: the sizes stored in the program.
  std::vector<std::vector<int32_t>> input_shapes;
  // Profiling into an ETDump; empty: none.
  std::string etdump_path;
  bool debug_output = false;
  size_t debug_buffer_size = 64 << 20;
  std::string debug_buffer_path;
  // Tolerances for the test cases of a bundled program.
  double rtol = 1e-5;
  double atol = 1e-5;
  // Instruction budget per execution; 0: none.
  size_t max_instructions = 0;
};

void print_usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--model_path model.pte] [--data_path weights.ptd]\n"
               "          [--method_name forward]\n"
               "          [--num_executions 1] [--inputs a.bin,b.bin] "
               "[--print_output]\n"
               "          [--input_shapes \"d0,d1,...;d0,...\"]  sizes of "
               "each tensor input\n"
               "             (';' between inputs) for a program with dynamic "
               "shapes; by\n"
               "             default inputs take the program's sizes (the "
               "upper bounds)\n"
               "          [--etdump_path run.etdp [--debug_output]\n"
               "           [--debug_buffer_size bytes] [--debug_buffer_path "
               "run.etdp.bin]]\n"
               "          [--rtol 1e-5] [--atol 1e-5]  tolerances for a "
               "bundled program's test cases\n"
               "          [--max_instructions N]  stop an execution after N "
               "instructions\n"
               "             (0, the default: no limit; %zu for programs from "
               "an\n"
               "             untrusted source, whose loops might never end)\n",
               argv0,
               Method::kMaxInstructionsForUntrustedPrograms);
}

std::vector<std::string> split(const std::string& list, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = list.find(separator, start);
    const size_t end = comma == std::string::npos ? list.size() : comma;
    if (end > start) {
      parts.push_back(list.substr(start, end - start));
    }
    start = end + 1;
  }
  return parts;
}

// Parses "1,3,32,32;8" into one list of sizes per input; nullopt (after
// printing why) on a malformed list.
std::optional<std::vector<std::vector<int32_t>>> parse_shapes(
    const std::string& text) {
  std::vector<std::vector<int32_t>> shapes;
  for (const std::string& shape : split(text, ';')) {
    shapes.emplace_back();
    for (const std::string& size : split(shape, ',')) {
      char* end = nullptr;
      const long value = std::strtol(size.c_str(), &end, 10);
      if (*end != '\0' || value < 0 || value > INT32_MAX) {
        std::fprintf(stderr,
                     "error: --input_shapes: '%s' in shape '%s' is not a "
                     "size\n",
                     size.c_str(),
                     shape.c_str());
        return std::nullopt;
      }
      shapes.back().push_back(static_cast<int32_t>(value));
    }
  }
  return shapes;
}

// Parses argv; nullopt (after printing why) on a bad command line.
std::optional<Options> parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    std::optional<std::string> value;
    const size_t equals = flag.find('=');
    if (equals != std::string::npos) {
      value = flag.substr(equals + 1);
      flag = flag.substr(0, equals);
    }
    // Fetches the flag's value from `--flag=value` or the next argument.
    auto take_value = [&]() -> std::optional<std::string> {
      if (value) {
        return value;
      }
      if (i + 1 < argc) {
        return std::string(argv[++i]);
      }
      std::fprintf(stderr, "error: %s needs a value\n", flag.c_str());
      return std::nullopt;
    };
    if (flag == "--help" || flag == "-h") {
      print_usage(argv[0]);
      std::exit(0);
    } else if (flag == "--print_output" || flag == "--debug_output") {
      if (value && *value != "true" && *value != "false") {
        std::fprintf(stderr,
                     "error: %s takes true or false, got '%s'\n",
                     flag.c_str(),
                     value->c_str());
        return std::nullopt;
      }
      (flag == "--print_output" ? options.print_output : options.debug_output) =
          !value || *value == "true";
    } else if (flag == "--model_path" || flag == "--data_path" ||
               flag == "--method_name" || flag == "--num_executions" ||
               flag == "--inputs" || flag == "--input_shapes" ||
               flag == "--etdump_path" || flag == "--debug_buffer_path" ||
               flag == "--debug_buffer_size" || flag == "--rtol" ||
               flag == "--atol" || flag == "--max_instructions") {
      const std::optional<std::string> v = take_value();
      if (!v) {
        return std::nullopt;
      }
      if (flag == "--model_path") {
        options.model_path = *v;
      } else if (flag == "--data_path") {
        options.data_path = *v;
      } else if (flag == "--method_name") {
        options.method_name = *v;
      } else if (flag == "--inputs") {
        options.input_files = split(*v, ',');
      } else if (flag == "--input_shapes") {
        auto shapes = parse_shapes(*v);
        if (!shapes) {
          return std::nullopt;
        }
        options.input_shapes = std::move(*shapes);
      } else if (flag == "--etdump_path") {
        options.etdump_path = *v;
      } else if (flag == "--debug_buffer_path") {
        options.debug_buffer_path = *v;
      } else if (flag == "--max_instructions") {
        char* end = nullptr;
        errno = 0;
        const unsigned long long number = std::strtoull(v->c_str(), &end, 10);
        if (v->empty() || *end != '\0' || (*v)[0] == '-' || errno == ERANGE ||
            number > SIZE_MAX) {
          std::fprintf(stderr,
                       "error: --max_instructions must be a non-negative "
                       "integer, got '%s'\n",
                       v->c_str());
          return std::nullopt;
        }
        options.max_instructions = static_cast<size_t>(number);
      } else if (flag == "--rtol" || flag == "--atol" ||
                 flag == "--debug_buffer_size") {
        char* end = nullptr;
        const double number = std::strtod(v->c_str(), &end);
        if (v->empty() || *end != '\0' || !(number >= 0)) {
          std::fprintf(stderr,
                       "error: %s must be a non-negative number, got '%s'\n",
                       flag.c_str(),
                       v->c_str());
          return std::nullopt;
        }
        if (flag == "--rtol") {
          options.rtol = number;
        } else if (flag == "--atol") {
          options.atol = number;
        } else {
          options.debug_buffer_size = static_cast<size_t>(number);
        }
      } else {
        char* end = nullptr;
        options.num_executions = std::strtol(v->c_str(), &end, 10);
        if (v->empty() || *end != '\0' || options.num_executions < 1) {
          std::fprintf(stderr,
                       "error: --num_executions must be a positive integer, "
                       "got '%s'\n",
                       v->c_str());
          return std::nullopt;
        }
      }
    } else {
      std::fprintf(stderr, "error: unknown flag '%s'\n", argv[i]);
      print_usage(argv[0]);
      return std::nullopt;
    }
  }
  if (options.debug_output && options.etdump_path.empty()) {
    std::fprintf(stderr, "error: --debug_output needs --etdump_path\n");
    return std::nullopt;
  }
  if (options.debug_buffer_path.empty()) {
    options.debug_buffer_path = options.etdump_path + ".bin";
  }
  return options;
}

void print_output(size_t index, const EValue& value, bool all_values) {
  std::cout << "Output " << index << ": ";
  switch (value.tag) {
    case Tag::Tensor: {
      const Tensor& tensor = value.toTensor();
      std::cout << "tensor " << executorch::extension::describe_tensor(tensor)
                << " = [";
      if (!executorch::extension::print_tensor_values(
              std::cout, tensor, all_values ? SIZE_MAX : kPreviewValues)) {
        std::cout << "<values of this dtype are not printed>";
      }
      std::cout << "]\n";
      break;
    }
    case Tag::Int:
      std::cout << "Int = " << value.toInt() << "\n";
      break;
    case Tag::Double: {
      char text[32];
      std::snprintf(text, sizeof(text), "%.17g", value.toDouble());
      std::cout << "Double = " << text << "\n";
      break;
    }
    case Tag::Bool:
      std::cout << "Bool = " << (value.toBool() ? "true" : "false") << "\n";
      break;
    default:
      std::cout << executorch::runtime::tag_to_string(value.tag) << "\n";
      break;
  }
}

// Reads the whole of `path`; nullopt (after printing why) on failure.
std::optional<std::vector<uint8_t>> read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    std::fprintf(stderr, "error: cannot open '%s'\n", path.c_str());
    return std::nullopt;
  }
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(file),
                              std::istreambuf_iterator<char>());
}

// Profiling of the method into an ETDump (--etdump_path). The Module owns
// the ETDumpGen (take_tracer()); this keeps its debug buffer.
struct Tracing {
  std::unique_ptr<ETDumpGen> owned = std::make_unique<ETDumpGen>();
  ETDumpGen& etdump = *owned;
  std::vector<uint8_t> debug_buffer;

  explicit Tracing(const Options& options) {
    if (options.debug_output) {
      debug_buffer.resize(options.debug_buffer_size);
      (void)etdump.set_debug_buffer(
          Span<uint8_t>(debug_buffer.data(), debug_buffer.size()));
      etdump.set_event_tracer_debug_level(
          executorch::runtime::EventTracerDebugLogLevel::kIntermediateOutputs);
    }
  }

  // Writes the ETDump (and the debug buffer's used part); false after
  // printing why on failure.
  bool write(const Options& options) {
    const executorch::etdump::ETDumpResult result = etdump.get_etdump_data();
    std::unique_ptr<void, decltype(&std::free)> owned(result.buf, &std::free);
    if (result.buf == nullptr ||
        !write_file(options.etdump_path, result.buf, result.size)) {
      return false;
    }
    std::printf(
        "ETDump: '%s' (%zu bytes)\n", options.etdump_path.c_str(), result.size);
    if (options.debug_output) {
      if (!write_file(options.debug_buffer_path,
                      debug_buffer.data(),
                      etdump.debug_buffer_used())) {
        return false;
      }
      std::printf("Debug buffer: '%s' (%zu bytes)\n",
                  options.debug_buffer_path.c_str(),
                  etdump.debug_buffer_used());
    }
    if (etdump.num_dropped_events() > 0) {
      std::printf(
          "warning: %zu events or values did not fit and were not "
          "recorded\n",
          etdump.num_dropped_events());
    }
    return true;
  }

  static bool write_file(const std::string& path,
                         const void* data,
                         size_t size) {
    std::ofstream file(path, std::ios::binary);
    file.write(static_cast<const char*>(data),
               static_cast<std::streamsize>(size));
    if (!file) {
      std::fprintf(stderr, "error: cannot write '%s'\n", path.c_str());
      return false;
    }
    return true;
  }
};

// Runs every test case of a bundled program's suite for the method and
// checks its outputs; the exit code.
int run_bundled_tests(Method& method,
                      const void* bundled,
                      const Options& options,
                      executorch::runtime::EventTracer* tracer) {
  namespace bp = executorch::bundled_program;
  const char* name = options.method_name.c_str();
  const Result<size_t> cases = bp::num_test_cases(bundled, name);
  if (!cases.ok() || *cases == 0) {
    std::fprintf(stderr,
                 "error: the bundled program has no test cases for '%s'\n",
                 name);
    return 1;
  }
  size_t failed = 0;
  for (size_t i = 0; i < *cases; ++i) {
    if (tracer != nullptr) {
      tracer->set_bundled_input_index(static_cast<int>(i));
    }
    Error status = bp::load_bundled_input(method, bundled, i);
    if (status == Error::Ok) {
      status = method.execute();
    }
    bp::OutputMismatch worst;
    if (status == Error::Ok) {
      status = bp::verify_method_outputs(
          method, bundled, i, options.rtol, options.atol, &worst);
    }
    if (status == Error::Ok) {
      std::printf(
          "Test case %zu: PASS (%zu elements; largest difference at "
          "output %zu element %zu: expected %g, got %g)\n",
          i,
          worst.num_elements,
          worst.output_index,
          worst.element_index,
          worst.expected,
          worst.actual);
      continue;
    }
    ++failed;
    if (worst.num_mismatched > 0) {
      std::printf(
          "Test case %zu: FAIL: %zu of %zu elements differ (rtol %g, "
          "atol %g); worst: output %zu element %zu, expected %g, "
          "got %g\n",
          i,
          worst.num_mismatched,
          worst.num_elements,
          options.rtol,
          options.atol,
          worst.output_index,
          worst.element_index,
          worst.expected,
          worst.actual);
    } else {
      std::printf("Test case %zu: FAIL: %s\n",
                  i,
                  executorch::runtime::to_string(status));
    }
  }
  std::printf("%zu of %zu test cases passed\n", *cases - failed, *cases);
  return failed == 0 ? 0 : 1;
}

// The program's data loader: the file itself, or the program inside a
// bundled program (whose bytes `bundled` then holds).
std::unique_ptr<DataLoader> open_program(const std::string& path,
                                         std::vector<uint8_t>* bundled) {
  std::ifstream head_file(path, std::ios::binary);
  char head[8] = {};
  head_file.read(head, sizeof(head));
  if (head_file &&
      executorch::bundled_program::is_bundled_program(head, sizeof(head))) {
    std::optional<std::vector<uint8_t>> bytes = read_file(path);
    if (!bytes) {
      return nullptr;
    }
    *bundled = std::move(*bytes);
    const void* program = nullptr;
    size_t size = 0;
    const Error found = executorch::bundled_program::get_program_data(
        bundled->data(), bundled->size(), &program, &size);
    if (found != Error::Ok) {
      std::fprintf(stderr,
                   "error: '%s' is a damaged bundled program: %s\n",
                   path.c_str(),
                   executorch::runtime::to_string(found));
      return nullptr;
    }
    std::printf("'%s' is a bundled program\n", path.c_str());
    return std::make_unique<BufferDataLoader>(program, size);
  }
  Result<FileDataLoader> loader = FileDataLoader::from(path.c_str());
  if (!loader.ok()) {
    std::fprintf(stderr,
                 "error: cannot open model '%s': %s\n",
                 path.c_str(),
                 executorch::runtime::to_string(loader.error()));
    return nullptr;
  }
  return std::make_unique<FileDataLoader>(std::move(*loader));
}

int run(const Options& options) {
  executorch::runtime::runtime_init();
#ifdef EXECUTORCH_WITH_OPTIMIZED_KERNELS
  // The optimized kernels, and the portable ones for the other operators.
  const Error kernels = executorch::kernels::register_optimized_kernels();
#else
  const Error kernels = executorch::kernels::register_portable_kernels();
#endif
  const Error prims = executorch::kernels::register_prim_ops();
  const Error quantized = executorch::kernels::register_quantized_kernels();
  if (kernels != Error::Ok || prims != Error::Ok || quantized != Error::Ok) {
    std::fprintf(stderr, "error: registering the kernel libraries failed\n");
    return 1;
  }
#ifdef EXECUTORCH_WITH_LLM_CUSTOM_OPS
  if (executorch::extension::llm::register_custom_ops() != Error::Ok) {
    std::fprintf(stderr, "error: registering the LLM custom operators failed\n");
    return 1;
  }
#endif
#ifdef EXECUTOR_RUNNER_EXTRA_KERNELS
  if (EXECUTOR_RUNNER_EXTRA_KERNELS() != Error::Ok) {
    std::fprintf(stderr, "error: registering the extra kernels failed\n");
    return 1;
  }
#endif
  if (executorch::backends::demo::register_demo_backend() != Error::Ok) {
    std::fprintf(stderr, "error: registering the demo backend failed\n");
    return 1;
  }
#ifdef EXECUTORCH_WITH_XNNPACK
  if (executorch::backends::xnnpack::register_xnnpack_backend() != Error::Ok) {
    std::fprintf(stderr, "error: registering the XNNPACK backend failed\n");
    return 1;
  }
#endif

  const char* model = options.model_path.c_str();
  const std::string& method_name = options.method_name;
  std::vector<uint8_t> bundled;
  std::unique_ptr<DataLoader> loader = open_program(model, &bundled);
  if (loader == nullptr) {
    return 1;
  }
  // Declared before the Module, which writes into its debug buffer.
  std::unique_ptr<Tracing> tracing = options.etdump_path.empty()
                                         ? nullptr
                                         : std::make_unique<Tracing>(options);
  std::unique_ptr<DataLoader> data_loader;
  if (!options.data_path.empty()) {
    Result<FileDataLoader> file = FileDataLoader::from(options.data_path.c_str());
    if (!file.ok()) {
      std::fprintf(stderr,
                   "error: cannot open the data file '%s'\n",
                   options.data_path.c_str());
      return 1;
    }
    data_loader = std::make_unique<FileDataLoader>(std::move(*file));
  }
  Module module(std::move(loader),
                /*memory_allocator=*/nullptr,
                /*temp_allocator=*/nullptr,
                tracing ? std::move(tracing->owned) : nullptr,
                std::move(data_loader));
  module.set_max_instructions(options.max_instructions);
  const Error loaded = module.load();
  if (loaded != Error::Ok) {
    std::fprintf(stderr,
                 "error: '%s'%s%s%s is not a loadable program: %s\n",
                 model,
                 options.data_path.empty() ? "" : " (with data file '",
                 options.data_path.c_str(),
                 options.data_path.empty() ? "" : "')",
                 executorch::runtime::to_string(loaded));
    return 1;
  }
  Result<MethodMeta> meta = module.method_meta(method_name);
  if (!meta.ok()) {
    const auto& program = *module.program();
    std::string names;
    for (size_t i = 0; i < program.num_methods(); ++i) {
      Result<const char*> name = program.get_method_name(i);
      names += (i == 0 ? "" : ", ") +
               std::string(name.ok() ? *name : "(a method without a name)");
    }
    std::fprintf(stderr,
                 "error: '%s' has no method '%s' (it has: %s)\n",
                 model,
                 method_name.c_str(),
                 names.c_str());
    return 1;
  }
  Result<Method*> method = module.method(method_name);
  if (!method.ok()) {
    std::fprintf(stderr,
                 "error: loading method '%s' of '%s' failed: %s\n",
                 method_name.c_str(),
                 model,
                 executorch::runtime::to_string(method.error()));
    return 1;
  }
  std::string planned_sizes;
  for (const size_t size : PlannedMemory::sizes_of(*meta)) {
    planned_sizes += (planned_sizes.empty() ? "" : ", ") + std::to_string(size);
  }
  std::printf(
      "Loaded '%s': method '%s', %zu inputs, %zu outputs, planned "
      "buffers [%s] bytes\n",
      model,
      method_name.c_str(),
      meta->num_inputs(),
      meta->num_outputs(),
      planned_sizes.c_str());

  if (!bundled.empty()) {
    const int status = run_bundled_tests(
        **method, bundled.data(), options, tracing ? &tracing->etdump : nullptr);
    return tracing && !tracing->write(options) ? 1 : status;
  }

  // One file and one shape per tensor input when given.
  std::vector<size_t> tensor_inputs;
  for (size_t i = 0; i < meta->num_inputs(); ++i) {
    if (*meta->input_tag(i) == Tag::Tensor) {
      tensor_inputs.push_back(i);
    } else {
      // Scalar inputs keep the value the program was exported with.
      std::printf("Input %zu: %s (value from the program)\n",
                  i,
                  executorch::runtime::tag_to_string(*meta->input_tag(i)));
    }
  }
  const auto count_matches = [&](size_t given, const char* flag,
                                 const char* what) {
    if (given == 0 || given == tensor_inputs.size()) {
      return true;
    }
    std::fprintf(stderr,
                 "error: method '%s' has %zu tensor inputs, %s gave %zu %s\n",
                 method_name.c_str(),
                 tensor_inputs.size(),
                 flag,
                 given,
                 what);
    return false;
  };
  if (!count_matches(options.input_files.size(), "--inputs", "files") ||
      !count_matches(options.input_shapes.size(), "--input_shapes", "shapes")) {
    return 1;
  }
  std::vector<TensorPtr> inputs;
  for (size_t k = 0; k < tensor_inputs.size(); ++k) {
    const size_t index = tensor_inputs[k];
    InputTensorSource source;
    if (!options.input_shapes.empty()) {
      const size_t rank = meta->input_tensor_meta(index)->sizes().size();
      if (options.input_shapes[k].size() != rank) {
        std::fprintf(stderr,
                     "error: input %zu: --input_shapes gave %zu sizes, the "
                     "input has rank %zu\n",
                     index,
                     options.input_shapes[k].size(),
                     rank);
        return 1;
      }
      source.sizes = options.input_shapes[k];
    }
    if (!options.input_files.empty()) {
      source.file = options.input_files[k];
    }
    Result<TensorPtr> input =
        executorch::extension::make_input_tensor(*meta, index, source);
    if (!input.ok()) {
      std::fprintf(stderr,
                   "error: making input %zu failed: %s\n",
                   index,
                   executorch::runtime::to_string(input.error()));
      return 1;
    }
    const std::string what = executorch::extension::describe_tensor(**input);
    if (source.file) {
      std::printf("Input %zu: %s from '%s'\n",
                  index,
                  what.c_str(),
                  source.file->c_str());
    } else {
      std::printf("Input %zu: %s (ones)\n", index, what.c_str());
    }
    inputs.push_back(std::move(*input));
  }

  double total_ms = 0;
  for (long run = 1; run <= options.num_executions; ++run) {
    // Memory planning may reuse an input's buffer once the input is dead, so
    // every run sets the inputs again.
    for (size_t k = 0; k < inputs.size(); ++k) {
      const Error set =
          module.set_input(method_name, EValue(*inputs[k]), tensor_inputs[k]);
      if (set != Error::Ok) {
        std::fprintf(stderr,
                     "error: setting input %zu of method '%s' failed: %s\n",
                     tensor_inputs[k],
                     method_name.c_str(),
                     executorch::runtime::to_string(set));
        return 1;
      }
    }
    const auto start = std::chrono::steady_clock::now();
    const Error status = (*method)->execute();
    const std::chrono::duration<double, std::milli> elapsed =
        std::chrono::steady_clock::now() - start;
    if (status != Error::Ok) {
      std::fprintf(stderr,
                   "error: run %ld of method '%s' failed: %s\n",
                   run,
                   method_name.c_str(),
                   executorch::runtime::to_string(status));
      return 1;
    }
    total_ms += elapsed.count();
    std::printf("Run %ld: %.3f ms\n", run, elapsed.count());
  }
  std::printf("Average over %ld runs: %.3f ms\n",
              options.num_executions,
              total_ms / static_cast<double>(options.num_executions));

  for (size_t i = 0; i < (*method)->outputs_size(); ++i) {
    print_output(i, (*method)->get_output(i), options.print_output);
  }
  return tracing && !tracing->write(options) ? 1 : 0;
}

} // namespace

int main(int argc, char** argv) {
  const std::optional<Options> options = parse_options(argc, argv);
  if (!options) {
    return 2;
  }
  return run(*options);
}
