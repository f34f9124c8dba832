// Loads a .pte with Module, runs one method and prints its outputs.
//
//   executorch_app MODEL.pte [--method NAME] [--input FILE]... [--output_prefix
//   P]
//
// Each --input FILE holds the raw bytes of one tensor input, in order;
// inputs not given are filled with ones. With --output_prefix, tensor output
// i is also written raw to P<i>.bin.

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include <executorch/extension/evalue_util/print_evalue.h>
#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor.h>

using executorch::extension::make_tensor_ptr;
using executorch::extension::Module;
using executorch::extension::ones_like;
using executorch::extension::TensorPtr;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::MethodMeta;
using executorch::runtime::Result;
using executorch::runtime::Tag;
using executorch::runtime::TensorInfo;

namespace {

struct Options {
  std::string model;
  std::string method = "forward";
  std::vector<std::string> inputs;
  std::string output_prefix;
};

bool parse(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--method" && has_value) {
      options.method = argv[++i];
    } else if (arg == "--input" && has_value) {
      options.inputs.push_back(argv[++i]);
    } else if (arg == "--output_prefix" && has_value) {
      options.output_prefix = argv[++i];
    } else if (options.model.empty() && arg.rfind("--", 0) != 0) {
      options.model = arg;
    } else {
      std::cerr << "error: unexpected argument '" << arg << "'\n";
      return false;
    }
  }
  return !options.model.empty();
}

// Input `index` as the method declares it, from `file` or filled with ones.
Result<TensorPtr> make_input(const TensorInfo& info,
                             size_t index,
                             const std::string* file) {
  std::vector<int32_t> sizes(info.sizes().begin(), info.sizes().end());
  std::vector<uint8_t> dim_order(info.dim_order().begin(),
                                 info.dim_order().end());
  if (file == nullptr) {
    return ones_like(make_tensor_ptr(sizes,
                                     std::vector<uint8_t>(info.nbytes()),
                                     dim_order,
                                     {},
                                     info.scalar_type()));
  }
  std::ifstream in(*file, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) {
    std::cerr << "error: cannot read input " << index << " from " << *file
              << "\n";
    return Error::AccessFailed;
  }
  if (bytes.size() != info.nbytes()) {
    std::cerr << "error: input " << index << " needs " << info.nbytes()
              << " bytes, " << *file << " has " << bytes.size() << "\n";
    return Error::InvalidArgument;
  }
  return make_tensor_ptr(
      sizes, std::move(bytes), dim_order, {}, info.scalar_type());
}

bool write_output(const EValue& output, const std::string& path) {
  const auto& tensor = output.toTensor();
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(tensor.const_data_ptr()),
            static_cast<std::streamsize>(tensor.nbytes()));
  return out.good();
}

} // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse(argc, argv, options)) {
    std::cerr << "usage: " << argv[0]
              << " MODEL.pte [--method NAME] [--input FILE]... "
                 "[--output_prefix PREFIX]\n";
    return 2;
  }
  Module module(options.model, Module::LoadMode::Mmap);
  Result<MethodMeta> meta = module.method_meta(options.method);
  if (!meta.ok()) {
    std::cerr << "error: cannot read method '" << options.method << "' of "
              << options.model << " (error " << static_cast<int>(meta.error())
              << ")\n";
    return 1;
  }
  // The tensors must outlive the run: inputs without planned memory are
  // borrowed rather than copied.
  std::vector<TensorPtr> tensors;
  std::vector<EValue> inputs;
  size_t next_file = 0;
  for (size_t i = 0; i < meta->num_inputs(); ++i) {
    Result<Tag> tag = meta->input_tag(i);
    if (!tag.ok() || *tag != Tag::Tensor) {
      std::cerr << "error: input " << i << " is not a tensor\n";
      return 1;
    }
    const std::string* file = next_file < options.inputs.size()
                                  ? &options.inputs[next_file++]
                                  : nullptr;
    Result<TensorPtr> tensor = make_input(*meta->input_tensor_meta(i), i, file);
    if (!tensor.ok()) {
      return 1;
    }
    tensors.push_back(*tensor);
    inputs.emplace_back(**tensor);
  }
  Result<std::vector<EValue>> outputs = module.execute(options.method, inputs);
  if (!outputs.ok()) {
    std::cerr << "error: running '" << options.method << "' failed (error "
              << static_cast<int>(outputs.error()) << ")\n";
    return 1;
  }
  for (size_t i = 0; i < outputs->size(); ++i) {
    const EValue& output = outputs->at(i);
    std::cout << "Output " << i << ": " << output << "\n";
    if (!options.output_prefix.empty() && output.isTensor() &&
        !write_output(output,
                      options.output_prefix + std::to_string(i) + ".bin")) {
      std::cerr << "error: cannot write output " << i << "\n";
      return 1;
    }
  }
  return 0;
}
