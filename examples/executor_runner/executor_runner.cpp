// executor_runner: loads a .pte program, runs one of its methods a number of
// times with inputs of ones (or raw tensor files), and prints the time of each
// run and the outputs.
//
//   executor_runner --model_path model.pte [--method_name forward]
//                   [--num_executions N] [--inputs a.bin,b.bin]
//                   [--input_shapes "1,3,32,32;8"] [--print_output]
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
// A bundled program (.bpte, from executorch.devtools.BundledProgram) is
// recognized by its contents: each test case of the method runs with its
// bundled inputs and its outputs are checked against the expected ones
// (|actual - expected| <= atol + rtol * |expected|, --rtol and --atol,
// default 1e-5 each); a failing case prints its worst element and the exit
// code is 1.
//
// Kernels (and the XNNPACK backend, when built with it) are registered
// explicitly at startup, so nothing depends on static initializers surviving
// the link. A build that links more kernel libraries (custom operators, see
// examples/custom_ops) defines EXECUTOR_RUNNER_EXTRA_KERNELS as the name of
// their registration function.

#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <executorch/devtools/bundled_program/bundled_program.h>
#include <executorch/devtools/etdump/etdump_gen.h>
#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/extension/memory_allocator/malloc_memory_allocator.h>
#include <executorch/extension/runner_util/output_buffers.h>
#ifdef EXECUTORCH_WITH_OPTIMIZED_KERNELS
#include <executorch/kernels/optimized/register_optimized_kernels.h>
#else
#include <executorch/kernels/portable/register_portable_kernels.h>
#endif
#include <executorch/kernels/quantized/register_quantized_kernels.h>
#include <executorch/kernels/prim_ops/register_prim_ops.h>
#include <executorch/runtime/core/exec_aten/util/dim_order_util.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/runtime.h>
#ifdef EXECUTORCH_WITH_XNNPACK
#include <executorch/backends/xnnpack/runtime/register_xnnpack_backend.h>
#endif

using executorch::aten::BFloat16;
using executorch::aten::Half;
using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using executorch::aten::TensorImpl;
using executorch::etdump::ETDumpGen;
using executorch::extension::BufferDataLoader;
using executorch::extension::FileDataLoader;
using executorch::extension::MallocMemoryAllocator;
using executorch::runtime::DataLoader;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::HierarchicalAllocator;
using executorch::runtime::MemoryManager;
using executorch::runtime::Method;
using executorch::runtime::MethodMeta;
using executorch::runtime::Program;
using executorch::runtime::Result;
using executorch::runtime::Span;
using executorch::runtime::Tag;
using executorch::runtime::TensorInfo;

#ifdef EXECUTOR_RUNNER_EXTRA_KERNELS
Error EXECUTOR_RUNNER_EXTRA_KERNELS();
#endif

namespace {

// Values printed per output without --print_output.
constexpr size_t kPreviewValues = 8;

struct Options {
  std::string model_path = "model.pte";
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
};

void print_usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--model_path model.pte] [--method_name forward]\n"
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
               "bundled program's test cases\n",
               argv0);
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
    } else if (flag == "--model_path" || flag == "--method_name" ||
               flag == "--num_executions" || flag == "--inputs" ||
               flag == "--input_shapes" || flag == "--etdump_path" ||
               flag == "--debug_buffer_path" || flag == "--debug_buffer_size" ||
               flag == "--rtol" || flag == "--atol") {
      const std::optional<std::string> v = take_value();
      if (!v) {
        return std::nullopt;
      }
      if (flag == "--model_path") {
        options.model_path = *v;
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

std::string describe(ScalarType dtype, const std::vector<int32_t>& sizes) {
  std::string text = executorch::runtime::toString(dtype);
  text += "[";
  for (size_t d = 0; d < sizes.size(); ++d) {
    text += (d == 0 ? "" : ", ") + std::to_string(sizes[d]);
  }
  return text + "]";
}

// Receives the failure of an ET_SWITCH dtype dispatch (which expects a
// kernel context) outside a kernel.
struct DispatchStatus {
  bool ok = true;
  void fail(Error) {
    ok = false;
  }
};

// Writes the value one into `count` elements of `dtype` at `data`; false for
// dtypes without a numeric one.
bool fill_ones(ScalarType dtype, void* data, size_t count) {
  DispatchStatus status;
  ET_SWITCH_REALHBBF16_TYPES(dtype, status, "fill_ones", CTYPE, [&]() {
    CTYPE* out = static_cast<CTYPE*>(data);
    for (size_t i = 0; i < count; ++i) {
      out[i] = static_cast<CTYPE>(1);
    }
  });
  return status.ok;
}

// Prints up to `limit` elements of `tensor` in logical (row-major) order,
// following its strides so that any dim order prints the same.
void print_values(const Tensor& tensor, size_t limit) {
  const size_t count = static_cast<size_t>(tensor.numel());
  const size_t shown = count < limit ? count : limit;
  const ssize_t rank = tensor.dim();
  DispatchStatus status;
  ET_SWITCH_REALHBBF16_TYPES(
      tensor.scalar_type(), status, "print_values", CTYPE, [&]() {
        const CTYPE* data = tensor.const_data_ptr<CTYPE>();
        std::vector<ssize_t> index(static_cast<size_t>(rank), 0);
        for (size_t n = 0; n < shown; ++n) {
          ssize_t offset = 0;
          for (ssize_t d = 0; d < rank; ++d) {
            offset += index[d] * tensor.strides()[d];
          }
          const CTYPE value = data[offset];
          std::printf("%s", n == 0 ? "" : ", ");
          if constexpr (std::is_same_v<CTYPE, bool>) {
            std::printf("%s", value ? "true" : "false");
          } else if constexpr (std::is_integral_v<CTYPE>) {
            std::printf("%lld", static_cast<long long>(value));
          } else {
            // Enough digits to read back the exact value of the type.
            std::printf(std::is_same_v<CTYPE, double> ? "%.17g" : "%.9g",
                        static_cast<double>(value));
          }
          // Advance the multi-index, last dimension fastest.
          for (ssize_t d = rank - 1; d >= 0; --d) {
            if (++index[d] < tensor.size(d)) {
              break;
            }
            index[d] = 0;
          }
        }
      });
  if (!status.ok) {
    std::printf("<values of this dtype are not printed>");
  } else if (shown < count) {
    std::printf(", ... (%zu more)", count - shown);
  }
}

void print_output(size_t index, const EValue& value, bool all_values) {
  std::printf("Output %zu: ", index);
  switch (value.tag) {
    case Tag::Tensor: {
      const Tensor& tensor = value.toTensor();
      std::vector<int32_t> sizes(tensor.sizes().begin(), tensor.sizes().end());
      std::printf("tensor %s = [",
                  describe(tensor.scalar_type(), sizes).c_str());
      print_values(tensor, all_values ? SIZE_MAX : kPreviewValues);
      std::printf("]\n");
      break;
    }
    case Tag::Int:
      std::printf("Int = %" PRId64 "\n", value.toInt());
      break;
    case Tag::Double:
      std::printf("Double = %.17g\n", value.toDouble());
      break;
    case Tag::Bool:
      std::printf("Bool = %s\n", value.toBool() ? "true" : "false");
      break;
    default:
      std::printf("%s\n", executorch::runtime::tag_to_string(value.tag));
      break;
  }
}

// A tensor input that owns its metadata and data.
struct InputTensor {
  std::vector<int32_t> sizes;
  std::vector<uint8_t> dim_order;
  std::vector<int32_t> strides;
  std::vector<uint8_t> data;
  std::unique_ptr<TensorImpl> impl;
};

// Reads the whole of `path`; nullopt (after printing why) on failure.
std::optional<std::vector<uint8_t>> read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    std::fprintf(stderr, "error: cannot open input file '%s'\n", path.c_str());
    return std::nullopt;
  }
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(file),
                              std::istreambuf_iterator<char>());
}

// Builds tensor input `index` described by `info`, at `shape` when given
// (else the program's sizes), from `file` when given (its size must match
// exactly), else filled with ones.
std::unique_ptr<InputTensor> make_input(size_t index,
                                        const TensorInfo& info,
                                        const std::string* file,
                                        const std::vector<int32_t>* shape) {
  auto input = std::make_unique<InputTensor>();
  input->sizes.assign(info.sizes().begin(), info.sizes().end());
  if (shape != nullptr) {
    if (shape->size() != input->sizes.size()) {
      std::fprintf(stderr,
                   "error: input %zu: --input_shapes gave %zu sizes, the "
                   "input has rank %zu (program sizes %s)\n",
                   index,
                   shape->size(),
                   input->sizes.size(),
                   describe(info.scalar_type(), input->sizes).c_str());
      return nullptr;
    }
    input->sizes = *shape;
  }
  size_t numel = 1;
  for (const int32_t size : input->sizes) {
    numel *= static_cast<size_t>(size);
  }
  const size_t nbytes =
      numel * executorch::runtime::etensor::elementSize(info.scalar_type());
  input->dim_order.assign(info.dim_order().begin(), info.dim_order().end());
  input->strides.resize(input->sizes.size());
  const std::string what = describe(info.scalar_type(), input->sizes);
  if (!input->sizes.empty() && executorch::runtime::dim_order_to_stride(
                                   input->sizes.data(),
                                   input->dim_order.data(),
                                   input->sizes.size(),
                                   input->strides.data()) != Error::Ok) {
    std::fprintf(stderr,
                 "error: input %zu (%s) has an invalid dim order\n",
                 index,
                 what.c_str());
    return nullptr;
  }
  if (file != nullptr) {
    std::optional<std::vector<uint8_t>> bytes = read_file(*file);
    if (!bytes) {
      return nullptr;
    }
    if (bytes->size() != nbytes) {
      std::fprintf(stderr,
                   "error: input %zu (%s) from '%s': expected %zu bytes, the "
                   "file has %zu\n",
                   index,
                   what.c_str(),
                   file->c_str(),
                   nbytes,
                   bytes->size());
      return nullptr;
    }
    input->data = std::move(*bytes);
    std::printf(
        "Input %zu: %s from '%s'\n", index, what.c_str(), file->c_str());
  } else {
    input->data.resize(nbytes);
    if (!fill_ones(info.scalar_type(), input->data.data(), numel)) {
      std::fprintf(stderr,
                   "error: input %zu (%s): no default value for this dtype; "
                   "pass --inputs\n",
                   index,
                   what.c_str());
      return nullptr;
    }
    std::printf("Input %zu: %s (ones)\n", index, what.c_str());
  }
  input->impl =
      std::make_unique<TensorImpl>(info.scalar_type(),
                                   static_cast<ssize_t>(input->sizes.size()),
                                   input->sizes.data(),
                                   input->data.data(),
                                   input->dim_order.data(),
                                   input->strides.data());
  return input;
}

// Profiling of the method into an ETDump (--etdump_path).
struct Tracing {
  ETDumpGen etdump;
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
#ifdef EXECUTOR_RUNNER_EXTRA_KERNELS
  if (EXECUTOR_RUNNER_EXTRA_KERNELS() != Error::Ok) {
    std::fprintf(stderr, "error: registering the extra kernels failed\n");
    return 1;
  }
#endif
#ifdef EXECUTORCH_WITH_XNNPACK
  if (executorch::backends::xnnpack::register_xnnpack_backend() != Error::Ok) {
    std::fprintf(stderr, "error: registering the XNNPACK backend failed\n");
    return 1;
  }
#endif

  const char* model = options.model_path.c_str();
  const char* method_name = options.method_name.c_str();
  std::vector<uint8_t> bundled;
  std::unique_ptr<DataLoader> loader = open_program(model, &bundled);
  if (loader == nullptr) {
    return 1;
  }
  Result<Program> program = Program::load(loader.get());
  if (!program.ok()) {
    std::fprintf(stderr,
                 "error: '%s' is not a loadable program: %s\n",
                 model,
                 executorch::runtime::to_string(program.error()));
    return 1;
  }
  Result<MethodMeta> meta = program->method_meta(method_name);
  if (!meta.ok()) {
    std::string names;
    for (size_t i = 0; i < program->num_methods(); ++i) {
      Result<const char*> name = program->get_method_name(i);
      names += (i == 0 ? "" : ", ") +
               std::string(name.ok() ? *name : "(a method without a name)");
    }
    std::fprintf(stderr,
                 "error: '%s' has no method '%s' (it has: %s)\n",
                 model,
                 method_name,
                 names.c_str());
    return 1;
  }

  // Planned memory, sized as the program asks.
  std::vector<std::vector<uint8_t>> planned;
  std::vector<Span<uint8_t>> spans;
  std::string planned_sizes;
  for (size_t i = 0; i < meta->num_memory_planned_buffers(); ++i) {
    const int64_t size = *meta->memory_planned_buffer_size(i);
    planned.emplace_back(static_cast<size_t>(size < 0 ? 0 : size));
    planned_sizes += (i == 0 ? "" : ", ") + std::to_string(size);
  }
  for (auto& buffer : planned) {
    spans.emplace_back(buffer.data(), buffer.size());
  }
  HierarchicalAllocator planned_memory({spans.data(), spans.size()});
  MallocMemoryAllocator method_allocator;
  MallocMemoryAllocator temp_allocator;
  MemoryManager memory(&method_allocator, &planned_memory, &temp_allocator);

  std::unique_ptr<Tracing> tracing = options.etdump_path.empty()
                                         ? nullptr
                                         : std::make_unique<Tracing>(options);
  Result<Method> method = program->load_method(
      method_name, &memory, tracing ? &tracing->etdump : nullptr);
  if (!method.ok()) {
    std::fprintf(stderr,
                 "error: loading method '%s' of '%s' failed: %s\n",
                 method_name,
                 model,
                 executorch::runtime::to_string(method.error()));
    return 1;
  }
  std::vector<std::vector<uint8_t>> output_buffers;
  const Error outputs_ready = executorch::extension::allocate_unplanned_outputs(
      *method, output_buffers);
  if (outputs_ready != Error::Ok) {
    std::fprintf(stderr,
                 "error: allocating the outputs of method '%s' failed: %s\n",
                 method_name,
                 executorch::runtime::to_string(outputs_ready));
    return 1;
  }
  std::printf(
      "Loaded '%s': method '%s', %zu inputs, %zu outputs, planned "
      "buffers [%s] bytes\n",
      model,
      method_name,
      meta->num_inputs(),
      meta->num_outputs(),
      planned_sizes.c_str());

  if (!bundled.empty()) {
    const int status = run_bundled_tests(
        *method, bundled.data(), options, tracing ? &tracing->etdump : nullptr);
    return tracing && !tracing->write(options) ? 1 : status;
  }

  // One file per tensor input when --inputs is given.
  size_t num_tensor_inputs = 0;
  for (size_t i = 0; i < meta->num_inputs(); ++i) {
    num_tensor_inputs += *meta->input_tag(i) == Tag::Tensor ? 1 : 0;
  }
  if (!options.input_files.empty() &&
      options.input_files.size() != num_tensor_inputs) {
    std::fprintf(stderr,
                 "error: method '%s' has %zu tensor inputs, --inputs gave %zu "
                 "files\n",
                 method_name,
                 num_tensor_inputs,
                 options.input_files.size());
    return 1;
  }
  if (!options.input_shapes.empty() &&
      options.input_shapes.size() != num_tensor_inputs) {
    std::fprintf(stderr,
                 "error: method '%s' has %zu tensor inputs, --input_shapes "
                 "gave %zu shapes\n",
                 method_name,
                 num_tensor_inputs,
                 options.input_shapes.size());
    return 1;
  }
  std::vector<std::unique_ptr<InputTensor>> inputs;
  std::vector<size_t> input_indices;
  for (size_t i = 0; i < meta->num_inputs(); ++i) {
    if (*meta->input_tag(i) != Tag::Tensor) {
      // Scalar inputs keep the value the program was exported with.
      std::printf("Input %zu: %s (value from the program)\n",
                  i,
                  executorch::runtime::tag_to_string(*meta->input_tag(i)));
      continue;
    }
    const std::string* file = options.input_files.empty()
                                  ? nullptr
                                  : &options.input_files[inputs.size()];
    const std::vector<int32_t>* shape =
        options.input_shapes.empty() ? nullptr
                                     : &options.input_shapes[inputs.size()];
    inputs.push_back(make_input(i, *meta->input_tensor_meta(i), file, shape));
    if (inputs.back() == nullptr) {
      return 1;
    }
    input_indices.push_back(i);
  }

  double total_ms = 0;
  for (long run = 1; run <= options.num_executions; ++run) {
    // Memory planning may reuse an input's buffer once the input is dead, so
    // every run sets the inputs again.
    for (size_t k = 0; k < inputs.size(); ++k) {
      const Error set = method->set_input(EValue(Tensor(inputs[k]->impl.get())),
                                          input_indices[k]);
      if (set != Error::Ok) {
        std::fprintf(stderr,
                     "error: setting input %zu of method '%s' failed: %s\n",
                     input_indices[k],
                     method_name,
                     executorch::runtime::to_string(set));
        return 1;
      }
    }
    const auto start = std::chrono::steady_clock::now();
    const Error status = method->execute();
    const std::chrono::duration<double, std::milli> elapsed =
        std::chrono::steady_clock::now() - start;
    if (status != Error::Ok) {
      std::fprintf(stderr,
                   "error: run %ld of method '%s' failed: %s\n",
                   run,
                   method_name,
                   executorch::runtime::to_string(status));
      return 1;
    }
    total_ms += elapsed.count();
    std::printf("Run %ld: %.3f ms\n", run, elapsed.count());
  }
  std::printf("Average over %ld runs: %.3f ms\n",
              options.num_executions,
              total_ms / static_cast<double>(options.num_executions));

  for (size_t i = 0; i < method->outputs_size(); ++i) {
    print_output(i, method->get_output(i), options.print_output);
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
