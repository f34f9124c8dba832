#include <executorch/extension/module/module.h>

#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/extension/flat_tensor/flat_tensor_data_map.h>
#include <executorch/extension/data_loader/mmap_data_loader.h>
#include <executorch/extension/memory_allocator/malloc_memory_allocator.h>
#include <executorch/extension/runner_util/output_buffers.h>
#include <executorch/runtime/executor/merged_data_map.h>

using ::executorch::runtime::DataLoader;
using ::executorch::runtime::Error;
using ::executorch::runtime::EValue;
using ::executorch::runtime::EventTracer;
using ::executorch::runtime::HierarchicalAllocator;
using ::executorch::runtime::MemoryAllocator;
using ::executorch::runtime::MemoryManager;
using ::executorch::runtime::MergedDataMap;
using ::executorch::runtime::Method;
using ::executorch::runtime::MethodMeta;
using ::executorch::runtime::NamedDataMap;
using ::executorch::runtime::Program;
using ::executorch::runtime::Result;

namespace executorch {
namespace extension {

namespace {

// The allocator given, or a heap-backed one.
std::unique_ptr<MemoryAllocator> or_malloc(
    std::unique_ptr<MemoryAllocator> allocator) {
  if (allocator) {
    return allocator;
  }
  return std::make_unique<MallocMemoryAllocator>();
}

// How an Mmap load mode locks pages.
MmapDataLoader::MlockConfig mlock_config(Module::LoadMode mode) {
  switch (mode) {
    case Module::LoadMode::MmapUseMlock:
      return MmapDataLoader::MlockConfig::UseMlock;
    case Module::LoadMode::MmapUseMlockIgnoreErrors:
      return MmapDataLoader::MlockConfig::UseMlockIgnoreErrors;
    default:
      return MmapDataLoader::MlockConfig::NoMlock;
  }
}

Result<std::unique_ptr<DataLoader>> open_loader(const std::string& path,
                                                Module::LoadMode mode) {
  if (mode == Module::LoadMode::File) {
    Result<FileDataLoader> loader = FileDataLoader::from(path.c_str());
    if (!loader.ok()) {
      return loader.error();
    }
    return std::unique_ptr<DataLoader>(
        std::make_unique<FileDataLoader>(std::move(*loader)));
  }
  Result<MmapDataLoader> loader =
      MmapDataLoader::from(path.c_str(), mlock_config(mode));
  if (!loader.ok()) {
    return loader.error();
  }
  return std::unique_ptr<DataLoader>(
      std::make_unique<MmapDataLoader>(std::move(*loader)));
}

} // namespace

Module::Module(const std::string& file_path,
               LoadMode load_mode,
               std::unique_ptr<EventTracer> event_tracer,
               std::unique_ptr<MemoryAllocator> memory_allocator,
               std::unique_ptr<MemoryAllocator> temp_allocator,
               bool share_memory_arenas)
    : Module(file_path,
             std::vector<std::string>{},
             load_mode,
             std::move(event_tracer),
             std::move(memory_allocator),
             std::move(temp_allocator),
             share_memory_arenas) {}

Module::Module(const std::string& file_path,
               const std::string& data_map_path,
               LoadMode load_mode,
               std::unique_ptr<EventTracer> event_tracer,
               std::unique_ptr<MemoryAllocator> memory_allocator,
               std::unique_ptr<MemoryAllocator> temp_allocator,
               bool share_memory_arenas)
    : Module(file_path,
             std::vector<std::string>{data_map_path},
             load_mode,
             std::move(event_tracer),
             std::move(memory_allocator),
             std::move(temp_allocator),
             share_memory_arenas) {}

Module::Module(const std::string& file_path,
               std::vector<std::string> data_files,
               LoadMode load_mode,
               std::unique_ptr<EventTracer> event_tracer,
               std::unique_ptr<MemoryAllocator> memory_allocator,
               std::unique_ptr<MemoryAllocator> temp_allocator,
               bool share_memory_arenas)
    : file_path_(file_path),
      data_files_(std::move(data_files)),
      load_mode_(load_mode),
      memory_allocator_(or_malloc(std::move(memory_allocator))),
      temp_allocator_(or_malloc(std::move(temp_allocator))),
      event_tracer_(std::move(event_tracer)),
      share_memory_arenas_(share_memory_arenas) {}

Module::Module(std::unique_ptr<DataLoader> data_loader,
               std::unique_ptr<MemoryAllocator> memory_allocator,
               std::unique_ptr<MemoryAllocator> temp_allocator,
               std::unique_ptr<EventTracer> event_tracer,
               std::unique_ptr<DataLoader> data_map_loader)
    : data_loader_(std::move(data_loader)),
      memory_allocator_(or_malloc(std::move(memory_allocator))),
      temp_allocator_(or_malloc(std::move(temp_allocator))),
      event_tracer_(std::move(event_tracer)),
      data_map_loader_(std::move(data_map_loader)) {}

Module::Module(std::shared_ptr<Program> program,
               std::unique_ptr<MemoryAllocator> memory_allocator,
               std::unique_ptr<MemoryAllocator> temp_allocator,
               std::unique_ptr<EventTracer> event_tracer,
               std::unique_ptr<DataLoader> data_map_loader)
    : program_(std::move(program)),
      memory_allocator_(or_malloc(std::move(memory_allocator))),
      temp_allocator_(or_malloc(std::move(temp_allocator))),
      event_tracer_(std::move(event_tracer)),
      data_map_loader_(std::move(data_map_loader)) {}

// Methods refer to the program, the allocators and the tracer: they go
// first.
Module::~Module() {
  methods_.clear();
}

Error Module::load(Program::Verification verification) {
  // A Module over a shared program still opens its own data files.
  ET_CHECK_OK_OR_RETURN_ERROR(load_data_files());
  if (is_loaded()) {
    return Error::Ok;
  }
  if (!data_loader_) {
    Result<std::unique_ptr<DataLoader>> loader =
        open_loader(file_path_, load_mode_);
    if (!loader.ok()) {
      ET_LOG(Error,
             "Module: cannot open the program '%s' (error 0x%x)",
             file_path_.c_str(),
             static_cast<unsigned>(loader.error()));
      return loader.error();
    }
    data_loader_ = std::move(*loader);
  }
  Result<Program> program = Program::load(data_loader_.get(), verification);
  if (!program.ok()) {
    ET_LOG(Error,
           "Module: '%s' is not a loadable program (error 0x%x)",
           file_path_.empty() ? "(data loader)" : file_path_.c_str(),
           static_cast<unsigned>(program.error()));
    return program.error();
  }
  // The program reads through the loader for as long as it lives, so the
  // program's owner (perhaps another Module) keeps the loader alive too.
  program_ = std::shared_ptr<Program>(
      new Program(std::move(*program)),
      [loader = data_loader_](Program* p) { delete p; });
  return Error::Ok;
}

Error Module::load_data_files() {
  if (data_files_loaded_) {
    return Error::Ok;
  }
  // Starts over after an earlier attempt failed.
  data_map_ = nullptr;
  data_maps_.clear();
  data_file_loaders_.clear();
  std::vector<std::pair<DataLoader*, const char*>> sources;
  if (data_map_loader_) {
    sources.emplace_back(data_map_loader_.get(), "(data map loader)");
  }
  for (const std::string& path : data_files_) {
    Result<std::unique_ptr<DataLoader>> loader = open_loader(path, load_mode_);
    if (!loader.ok()) {
      ET_LOG(Error,
             "Module: cannot open the data file '%s' (error 0x%x)",
             path.c_str(),
             static_cast<unsigned>(loader.error()));
      return loader.error();
    }
    data_file_loaders_.push_back(std::move(*loader));
    sources.emplace_back(data_file_loaders_.back().get(), path.c_str());
  }
  for (const auto& [loader, name] : sources) {
    Result<FlatTensorDataMap> map = FlatTensorDataMap::load(loader);
    if (!map.ok()) {
      ET_LOG(Error,
             "Module: '%s' is not a readable .ptd data file (error 0x%x)",
             name,
             static_cast<unsigned>(map.error()));
      return map.error();
    }
    data_maps_.push_back(
        std::make_unique<FlatTensorDataMap>(std::move(*map)));
    const NamedDataMap* added = data_maps_.back().get();
    if (data_map_ == nullptr) {
      data_map_ = added;
      continue;
    }
    // Several files: each new one merged with the view of those before.
    Result<MergedDataMap> merged = MergedDataMap::load(data_map_, added);
    if (!merged.ok()) {
      ET_LOG(Error,
             "Module: data file '%s' repeats keys of an earlier data file",
             name);
      return merged.error();
    }
    data_maps_.push_back(std::make_unique<MergedDataMap>(std::move(*merged)));
    data_map_ = data_maps_.back().get();
  }
  data_files_loaded_ = true;
  return Error::Ok;
}

Result<size_t> Module::num_methods() {
  ET_CHECK_OK_OR_RETURN_ERROR(load());
  return program_->num_methods();
}

Result<std::unordered_set<std::string>> Module::method_names() {
  ET_CHECK_OK_OR_RETURN_ERROR(load());
  std::unordered_set<std::string> names;
  for (size_t i = 0; i < program_->num_methods(); ++i) {
    Result<const char*> name = program_->get_method_name(i);
    if (!name.ok()) {
      return name.error();
    }
    names.emplace(*name);
  }
  return names;
}

Result<MethodMeta> Module::method_meta(const std::string& method_name) {
  ET_CHECK_OK_OR_RETURN_ERROR(load());
  Result<MethodMeta> meta = program_->method_meta(method_name.c_str());
  if (!meta.ok()) {
    std::string names;
    for (size_t i = 0; i < program_->num_methods(); ++i) {
      Result<const char*> name = program_->get_method_name(i);
      names +=
          (i == 0 ? "'" : ", '") + std::string(name.ok() ? *name : "?") + "'";
    }
    ET_LOG(Error,
           "Module: no method '%s' in the program; it has %s",
           method_name.c_str(),
           names.empty() ? "none" : names.c_str());
  }
  return meta;
}

Error Module::load_method(const std::string& method_name,
                          HierarchicalAllocator* planned_memory,
                          EventTracer* event_tracer) {
  if (is_method_loaded(method_name)) {
    return Error::Ok;
  }
  Result<MethodMeta> meta = method_meta(method_name);
  if (!meta.ok()) {
    return meta.error();
  }
  auto loaded = std::make_unique<LoadedMethod>();
  if (planned_memory == nullptr) {
    if (share_memory_arenas_ && !shared_arenas_) {
      shared_arenas_ = std::make_unique<SharedArenas>(*program_);
    }
    loaded->planned_memory =
        shared_arenas_ ? std::make_unique<PlannedMemory>(
                             *meta, shared_arenas_->spans())
                       : std::make_unique<PlannedMemory>(*meta);
    planned_memory = loaded->planned_memory->allocator();
  }
  loaded->memory_manager = std::make_unique<MemoryManager>(
      memory_allocator_.get(), planned_memory, temp_allocator_.get());
  // Loading copies initial values into the shared mutable buffers: keep
  // the state the methods loaded before have built up.
  std::vector<uint8_t> shared_state;
  if (!methods_.empty() && shared_arenas_) {
    shared_state = shared_arenas_->save_state();
  }
  Result<Method> method = program_->load_method(
      method_name.c_str(),
      loaded->memory_manager.get(),
      event_tracer != nullptr ? event_tracer : event_tracer_.get(),
      data_map_);
  if (!shared_state.empty()) {
    shared_arenas_->restore_state(shared_state);
  }
  if (!method.ok()) {
    ET_LOG(Error,
           "Module: loading method '%s' failed (error 0x%x)",
           method_name.c_str(),
           static_cast<unsigned>(method.error()));
    return method.error();
  }
  loaded->method = std::make_unique<Method>(std::move(*method));
  loaded->method->set_max_instructions(max_instructions_);
  ET_CHECK_OK_OR_RETURN_ERROR(
      allocate_unplanned_outputs(*loaded->method, loaded->output_storage));
  // An input the program declares as None needs no value.
  for (size_t i = 0; i < loaded->method->inputs_size(); ++i) {
    loaded->input_is_set.push_back(loaded->method->get_input(i).isNone());
  }
  methods_.emplace(method_name, std::move(loaded));
  return Error::Ok;
}

void Module::set_max_instructions(size_t max_instructions) {
  max_instructions_ = max_instructions;
  for (auto& entry : methods_) {
    entry.second->method->set_max_instructions(max_instructions);
  }
}

Error Module::reset_mutable_buffers(const std::string& method_name) {
  Result<LoadedMethod*> loaded = loaded_method(method_name);
  if (!loaded.ok()) {
    return loaded.error();
  }
  return (*loaded)->method->reset_mutable_buffers();
}

Result<Module::LoadedMethod*> Module::loaded_method(
    const std::string& method_name) {
  ET_CHECK_OK_OR_RETURN_ERROR(load_method(method_name));
  return methods_.at(method_name).get();
}

Error Module::set_input(const std::string& method_name,
                        const EValue& input_value,
                        size_t input_index) {
  Result<LoadedMethod*> loaded = loaded_method(method_name);
  if (!loaded.ok()) {
    return loaded.error();
  }
  ET_CHECK_OK_OR_RETURN_ERROR(
      (*loaded)->method->set_input(input_value, input_index));
  (*loaded)->input_is_set[input_index] = true;
  return Error::Ok;
}

Error Module::set_inputs(const std::string& method_name,
                         const std::vector<EValue>& input_values) {
  Result<LoadedMethod*> loaded = loaded_method(method_name);
  if (!loaded.ok()) {
    return loaded.error();
  }
  const size_t expected = (*loaded)->method->inputs_size();
  ET_CHECK_OR_RETURN_ERROR(input_values.size() == expected,
                           InvalidArgument,
                           "Method '%s' takes %zu inputs, got %zu",
                           method_name.c_str(),
                           expected,
                           input_values.size());
  for (size_t i = 0; i < input_values.size(); ++i) {
    ET_CHECK_OK_OR_RETURN_ERROR(set_input(method_name, input_values[i], i));
  }
  return Error::Ok;
}

Error Module::set_output(const std::string& method_name,
                         EValue output_value,
                         size_t output_index) {
  Result<LoadedMethod*> loaded = loaded_method(method_name);
  if (!loaded.ok()) {
    return loaded.error();
  }
  ET_CHECK_OR_RETURN_ERROR(output_value.isTensor(),
                           InvalidArgument,
                           "Method '%s' output %zu: set_output takes a "
                           "tensor to write into",
                           method_name.c_str(),
                           output_index);
  const auto& tensor = output_value.toTensor();
  return (*loaded)->method->set_output_data_ptr(
      tensor.mutable_data_ptr(), tensor.nbytes(), output_index);
}

Error Module::set_outputs(const std::string& method_name,
                          const std::vector<EValue>& output_values) {
  Result<LoadedMethod*> loaded = loaded_method(method_name);
  if (!loaded.ok()) {
    return loaded.error();
  }
  const size_t expected = (*loaded)->method->outputs_size();
  ET_CHECK_OR_RETURN_ERROR(output_values.size() == expected,
                           InvalidArgument,
                           "Method '%s' has %zu outputs, got %zu",
                           method_name.c_str(),
                           expected,
                           output_values.size());
  for (size_t i = 0; i < output_values.size(); ++i) {
    ET_CHECK_OK_OR_RETURN_ERROR(set_output(method_name, output_values[i], i));
  }
  return Error::Ok;
}

Result<Method*> Module::method(const std::string& method_name) {
  Result<LoadedMethod*> loaded = loaded_method(method_name);
  if (!loaded.ok()) {
    return loaded.error();
  }
  return (*loaded)->method.get();
}

Result<std::vector<EValue>> Module::execute(
    const std::string& method_name, const std::vector<EValue>& input_values) {
  Result<LoadedMethod*> loaded = loaded_method(method_name);
  if (!loaded.ok()) {
    return loaded.error();
  }
  Method& method = *(*loaded)->method;
  const std::vector<bool>& is_set = (*loaded)->input_is_set;
  ET_CHECK_OR_RETURN_ERROR(input_values.size() <= method.inputs_size(),
                           InvalidArgument,
                           "Method '%s' takes %zu inputs, got %zu",
                           method_name.c_str(),
                           method.inputs_size(),
                           input_values.size());
  for (size_t i = 0; i < input_values.size(); ++i) {
    if (!input_values[i].isNone()) {
      ET_CHECK_OK_OR_RETURN_ERROR(set_input(method_name, input_values[i], i));
    }
  }
  for (size_t i = 0; i < is_set.size(); ++i) {
    ET_CHECK_OR_RETURN_ERROR(is_set[i],
                             InvalidArgument,
                             "Method '%s' takes %zu inputs, got %zu: input "
                             "%zu was neither given nor set with set_input",
                             method_name.c_str(),
                             method.inputs_size(),
                             input_values.size(),
                             i);
  }
  ET_CHECK_OK_OR_RETURN_ERROR(method.execute());
  return get_outputs(method_name);
}

Result<std::vector<EValue>> Module::get_outputs(
    const std::string& method_name) {
  Result<LoadedMethod*> loaded = loaded_method(method_name);
  if (!loaded.ok()) {
    return loaded.error();
  }
  Method& method = *(*loaded)->method;
  std::vector<EValue> outputs(method.outputs_size());
  ET_CHECK_OK_OR_RETURN_ERROR(
      method.get_outputs(outputs.data(), outputs.size()));
  return outputs;
}

Result<EValue> Module::get_output(const std::string& method_name,
                                  size_t output_index) {
  Result<std::vector<EValue>> outputs = get_outputs(method_name);
  if (!outputs.ok()) {
    return outputs.error();
  }
  ET_CHECK_OR_RETURN_ERROR(output_index < outputs->size(),
                           InvalidArgument,
                           "Method '%s' has %zu outputs; there is no output "
                           "%zu",
                           method_name.c_str(),
                           outputs->size(),
                           output_index);
  return outputs->at(output_index);
}

Result<EValue> Module::get(const std::string& method_name,
                           const std::vector<EValue>& input_values) {
  Result<std::vector<EValue>> outputs = execute(method_name, input_values);
  if (!outputs.ok()) {
    return outputs.error();
  }
  ET_CHECK_OR_RETURN_ERROR(!outputs->empty(),
                           InvalidArgument,
                           "Method '%s' has no outputs to get",
                           method_name.c_str());
  return outputs->front();
}

} // namespace extension
} // namespace executorch
