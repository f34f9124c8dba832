// Runs one XNNPACK delegate blob on raw float32 inputs, outside any program:
// the Python lowering's tests compare its outputs with eager PyTorch.
//
//   xnnpack_run_blob BLOB OUT_PREFIX [--threads N] [--repeat N] INPUT.bin...
//
// Each INPUT.bin holds the contiguous float32 data of one delegate input, in
// args order, with the blob's dims; output j is written to OUT_PREFIX<j>.bin.
// The blob's constants must be inside it (not named data).
// With --repeat, execute runs N times and the mean latency is printed.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <executorch/backends/xnnpack/runtime/blob.h>
#include <executorch/backends/xnnpack/runtime/graph.h>
#include <executorch/backends/xnnpack/runtime/register_xnnpack_backend.h>
#include <executorch/backends/xnnpack/runtime/xnnpack_backend.h>
#include <executorch/extension/tensor/tensor.h>
#include <executorch/runtime/platform/runtime.h>

namespace {

using executorch::runtime::Error;
namespace xnn = executorch::backends::xnnpack;
namespace et = executorch::runtime;

std::vector<uint8_t> read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// A zero-filled contiguous float tensor of the blob's `dims`.
executorch::extension::TensorPtr float_tensor(const std::vector<size_t>& dims) {
  return executorch::extension::empty(
      std::vector<executorch::aten::SizesType>(dims.begin(), dims.end()),
      executorch::aten::ScalarType::Float,
      executorch::aten::TensorShapeDynamism::STATIC);
}

int fail(const char* message) {
  std::fprintf(stderr, "xnnpack_run_blob: %s\n", message);
  return 1;
}

} // namespace

int main(int argc, char** argv) {
  et::runtime_init();
  if (argc < 3) {
    return fail(
        "usage: xnnpack_run_blob BLOB OUT_PREFIX [--threads N] [--repeat N] "
        "INPUT.bin...");
  }
  std::vector<uint8_t> blob = read_file(argv[1]);
  const std::string out_prefix = argv[2];
  int next = 3;
  int repeat = 1;
  while (next + 1 < argc && std::strncmp(argv[next], "--", 2) == 0) {
    const int value = std::atoi(argv[next + 1]);
    if (std::strcmp(argv[next], "--threads") == 0) {
      xnn::set_num_threads(static_cast<size_t>(value));
    } else if (std::strcmp(argv[next], "--repeat") == 0 && value > 0) {
      repeat = value;
    } else {
      return fail("unknown option");
    }
    next += 2;
  }
  // The graph's args and their dims, as the backend will check them.
  et::Result<xnn::BlobView> view = xnn::parse_blob(blob.data(), blob.size());
  if (!view.ok()) {
    return fail("cannot parse the blob");
  }
  xnn::Graph graph;
  if (xnn::load_graph(*view, /*named_data_map=*/nullptr, &graph) != Error::Ok) {
    return fail("the blob's graph is malformed");
  }
  if (static_cast<size_t>(argc - next) != graph.inputs.size()) {
    return fail("the number of input files differs from the blob's inputs");
  }
  std::vector<executorch::extension::TensorPtr> tensors;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    tensors.push_back(float_tensor(graph.values[graph.inputs[i]].dims));
    const std::vector<uint8_t> bytes = read_file(argv[next + i]);
    if (bytes.size() != tensors.back()->nbytes()) {
      return fail("an input file's size differs from the blob's dims");
    }
    std::memcpy(tensors.back()->mutable_data_ptr(), bytes.data(), bytes.size());
  }
  for (uint32_t v : graph.outputs) {
    tensors.push_back(float_tensor(graph.values[v].dims));
  }

  xnn::XnnpackBackend backend;
  std::vector<uint8_t> pool(64 * 1024);
  et::MemoryAllocator allocator(pool.size(), pool.data());
  et::BackendInitContext init_context(&allocator);
  et::FreeableBuffer processed(blob.data(), blob.size(), nullptr);
  et::Result<et::DelegateHandle*> handle =
      backend.init(init_context, &processed, {});
  if (!handle.ok()) {
    return fail("init failed");
  }
  std::vector<et::EValue> values;
  for (auto& t : tensors) {
    values.emplace_back(*t);
  }
  std::vector<et::EValue*> args;
  for (auto& v : values) {
    args.push_back(&v);
  }
  et::BackendExecutionContext context;
  const et::Span<et::EValue*> span(args.data(), args.size());
  // The first run sets the runtimes up; later runs only execute.
  Error error = backend.execute(context, *handle, span);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 1; i < repeat && error == Error::Ok; ++i) {
    error = backend.execute(context, *handle, span);
  }
  if (repeat > 1) {
    const std::chrono::duration<double, std::milli> elapsed =
        std::chrono::steady_clock::now() - start;
    std::printf("mean execute latency: %.4f ms over %d runs\n",
                elapsed.count() / (repeat - 1),
                repeat - 1);
  }
  backend.destroy(*handle);
  if (error != Error::Ok) {
    return fail("execute failed");
  }
  for (size_t j = 0; j < graph.outputs.size(); ++j) {
    const executorch::aten::Tensor& out = *tensors[graph.inputs.size() + j];
    const std::string path = out_prefix + std::to_string(j) + ".bin";
    std::ofstream file(path, std::ios::binary);
    file.write(static_cast<const char*>(out.const_data_ptr()),
               static_cast<std::streamsize>(out.nbytes()));
  }
  return 0;
}
