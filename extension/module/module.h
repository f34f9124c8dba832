#pragma once

// Module: the easy way for an app to run a .pte. It opens the file (or takes
// a DataLoader, or an already loaded Program shared with other Modules),
// loads methods on first use with heap-allocated memory sized from each
// method's metadata, and runs them on EValue inputs (see
// extension/tensor/tensor.h for making tensors).
//
// Errors come back as Error / Result with a log line that says what was
// wrong: the file, the method name and the names it has, the input index
// with the expected and actual dtype or shape, the output buffer size.
//
// Threading: a Module is used by one thread at a time. The Program it loads
// is immutable and may be shared: construct one Module per thread from
// `other.program()`, and each gets its own methods and memory.
//
// Kernels are not registered by the Module: link a kernel library and call
// its registration function (or link `executorch::portable_ops_lib` from the
// installed package, which registers at startup).

#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <executorch/extension/memory_allocator/planned_memory.h>
#include <executorch/runtime/core/data_loader.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/event_tracer.h>
#include <executorch/runtime/core/hierarchical_allocator.h>
#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/executor/memory_manager.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/method_meta.h>
#include <executorch/runtime/executor/program.h>

namespace executorch {
namespace extension {

class Module {
 public:
  // How a Module constructed from a path reads the file.
  enum class LoadMode {
    // Read each needed range into heap memory.
    File,
    // Map the file; pages are read on first touch.
    Mmap,
    // Map and lock the pages in RAM; fail if they cannot be locked.
    MmapUseMlock,
    // Map and lock the pages when the system allows it.
    MmapUseMlockIgnoreErrors,
  };

  // Reads the program at `file_path` on first use (or on load()). With an
  // `event_tracer` (e.g. executorch::etdump::ETDumpGen), every method this
  // Module loads reports its load and runs to it (see event_tracer()).
  // With `share_memory_arenas`, the methods' first two planned buffers
  // (memory ids 1 and 2) are one allocation each, sized for the largest
  // method: a program planned with MemoryPlanningPass(
  // share_mutable_buffers=True) keeps its mutable buffers at the same place
  // in buffer 2 for every method, so prefill and decode share a KV cache.
  // Load all such methods before running any: loading one copies the
  // buffers' initial values in.
  explicit Module(
      const std::string& file_path,
      LoadMode load_mode = LoadMode::File,
      std::unique_ptr<::executorch::runtime::EventTracer> event_tracer =
          nullptr,
      std::unique_ptr<::executorch::runtime::MemoryAllocator> memory_allocator =
          nullptr,
      std::unique_ptr<::executorch::runtime::MemoryAllocator> temp_allocator =
          nullptr,
      bool share_memory_arenas = false);

  // As above, with the program's data outside the .pte (external constants,
  // delegate weights) read from the .ptd file at `data_map_path`.
  explicit Module(
      const std::string& file_path,
      const std::string& data_map_path,
      LoadMode load_mode = LoadMode::File,
      std::unique_ptr<::executorch::runtime::EventTracer> event_tracer =
          nullptr,
      std::unique_ptr<::executorch::runtime::MemoryAllocator> memory_allocator =
          nullptr,
      std::unique_ptr<::executorch::runtime::MemoryAllocator> temp_allocator =
          nullptr,
      bool share_memory_arenas = false);

  // As above, with several .ptd files; a key may be in only one of them.
  explicit Module(
      const std::string& file_path,
      std::vector<std::string> data_files,
      LoadMode load_mode = LoadMode::File,
      std::unique_ptr<::executorch::runtime::EventTracer> event_tracer =
          nullptr,
      std::unique_ptr<::executorch::runtime::MemoryAllocator> memory_allocator =
          nullptr,
      std::unique_ptr<::executorch::runtime::MemoryAllocator> temp_allocator =
          nullptr,
      bool share_memory_arenas = false);

  // Reads the program through `data_loader`. The allocators, when given,
  // serve the methods' bookkeeping and the kernels' scratch memory instead
  // of the heap. `data_map_loader`, when given, reads a .ptd file with the
  // program's external data.
  explicit Module(
      std::unique_ptr<::executorch::runtime::DataLoader> data_loader,
      std::unique_ptr<::executorch::runtime::MemoryAllocator> memory_allocator =
          nullptr,
      std::unique_ptr<::executorch::runtime::MemoryAllocator> temp_allocator =
          nullptr,
      std::unique_ptr<::executorch::runtime::EventTracer> event_tracer =
          nullptr,
      std::unique_ptr<::executorch::runtime::DataLoader> data_map_loader =
          nullptr);

  // Uses a program that is already loaded, typically `other.program()`, so
  // that several Modules (in several threads) share one copy of it. Each
  // Module reads its own view of the external data (`data_map_loader`).
  explicit Module(
      std::shared_ptr<::executorch::runtime::Program> program,
      std::unique_ptr<::executorch::runtime::MemoryAllocator> memory_allocator =
          nullptr,
      std::unique_ptr<::executorch::runtime::MemoryAllocator> temp_allocator =
          nullptr,
      std::unique_ptr<::executorch::runtime::EventTracer> event_tracer =
          nullptr,
      std::unique_ptr<::executorch::runtime::DataLoader> data_map_loader =
          nullptr);

  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  Module(Module&&) = delete;
  Module& operator=(Module&&) = delete;
  ~Module();

  // Loads the program if it is not loaded yet. The methods below call it.
  ET_NODISCARD ::executorch::runtime::Error load(
      ::executorch::runtime::Program::Verification verification =
          ::executorch::runtime::Program::Verification::Minimal);
  bool is_loaded() const {
    return program_ != nullptr;
  }
  // The loaded program (null before load()), to share with other Modules.
  std::shared_ptr<::executorch::runtime::Program> program() const {
    return program_;
  }

  ::executorch::runtime::Result<size_t> num_methods();
  ::executorch::runtime::Result<std::unordered_set<std::string>> method_names();

  // The tracer given at construction (null if none); owned by the Module.
  ::executorch::runtime::EventTracer* event_tracer() const {
    return event_tracer_.get();
  }

  // Loads `method_name` if it is not loaded yet. `planned_memory`, when
  // given, provides the method's planned buffers (it must outlive the
  // Module); otherwise they are allocated to the sizes the method declares.
  // `event_tracer` (not owned) replaces the Module's own for this method.
  ET_NODISCARD ::executorch::runtime::Error load_method(
      const std::string& method_name,
      ::executorch::runtime::HierarchicalAllocator* planned_memory = nullptr,
      ::executorch::runtime::EventTracer* event_tracer = nullptr);
  ET_NODISCARD ::executorch::runtime::Error load_forward(
      ::executorch::runtime::HierarchicalAllocator* planned_memory = nullptr,
      ::executorch::runtime::EventTracer* event_tracer = nullptr) {
    return load_method("forward", planned_memory, event_tracer);
  }
  // Puts the method's mutable buffers back to their initial values (see
  // Method::reset_mutable_buffers), loading it if needed.
  ET_NODISCARD ::executorch::runtime::Error reset_mutable_buffers(
      const std::string& method_name = "forward");
  bool is_method_loaded(const std::string& method_name) const {
    return methods_.count(method_name) != 0;
  }
  // Frees a loaded method and its memory (outputs it returned become
  // invalid). False if it was not loaded.
  bool unload_method(const std::string& method_name) {
    return methods_.erase(method_name) != 0;
  }
  bool unload_forward() {
    return unload_method("forward");
  }

  // The Method `method_name`, loaded on first use, for callers that drive it
  // directly: its set_input, execute and get_output allocate nothing,
  // unlike execute() below, which returns a new vector each run (the LLM
  // runner's decode loop). Owned by the Module; valid until unload_method().
  ::executorch::runtime::Result<::executorch::runtime::Method*> method(
      const std::string& method_name);

  // An instruction budget for every method of this Module, loaded now or
  // later (see Method::set_max_instructions): one execution that runs more
  // instructions fails with InvalidState and a log line naming the
  // instruction it stopped at. 0 (the default) means no limit; a program
  // from an untrusted source should get
  // Method::kMaxInstructionsForUntrustedPrograms.
  void set_max_instructions(size_t max_instructions);
  size_t max_instructions() const {
    return max_instructions_;
  }

  // Inputs, outputs and memory needs of `method_name`, without loading it.
  ::executorch::runtime::Result<::executorch::runtime::MethodMeta> method_meta(
      const std::string& method_name);

  // Sets the inputs, runs the method and returns its outputs. Tensor outputs
  // refer to the method's memory: they stay valid until the method runs
  // again or the Module is destroyed (clone_tensor_ptr keeps a copy). An
  // input given as None keeps the value set earlier with set_input; every
  // input must have been given one way or the other.
  ::executorch::runtime::Result<std::vector<::executorch::runtime::EValue>>
  execute(const std::string& method_name,
          const std::vector<::executorch::runtime::EValue>& input_values);
  ::executorch::runtime::Result<std::vector<::executorch::runtime::EValue>>
  execute(const std::string& method_name,
          const ::executorch::runtime::EValue& input_value) {
    return execute(method_name,
                   std::vector<::executorch::runtime::EValue>{input_value});
  }
  ::executorch::runtime::Result<std::vector<::executorch::runtime::EValue>>
  execute(const std::string& method_name) {
    return execute(method_name, std::vector<::executorch::runtime::EValue>{});
  }

  // execute(), returning only the first output.
  ::executorch::runtime::Result<::executorch::runtime::EValue> get(
      const std::string& method_name,
      const std::vector<::executorch::runtime::EValue>& input_values);
  ::executorch::runtime::Result<::executorch::runtime::EValue> get(
      const std::string& method_name,
      const ::executorch::runtime::EValue& input_value) {
    return get(method_name,
               std::vector<::executorch::runtime::EValue>{input_value});
  }
  ::executorch::runtime::Result<::executorch::runtime::EValue> get(
      const std::string& method_name) {
    return get(method_name, std::vector<::executorch::runtime::EValue>{});
  }

  // execute("forward", ...).
  ::executorch::runtime::Result<std::vector<::executorch::runtime::EValue>>
  forward(const std::vector<::executorch::runtime::EValue>& input_values) {
    return execute("forward", input_values);
  }
  ::executorch::runtime::Result<std::vector<::executorch::runtime::EValue>>
  forward(const ::executorch::runtime::EValue& input_value) {
    return execute("forward", input_value);
  }
  ::executorch::runtime::Result<std::vector<::executorch::runtime::EValue>>
  forward() {
    return execute("forward");
  }

  // Sets input `input_index` of `method_name` (loading the method first)
  // for later executions. The value is checked against the method's
  // declared dtype and shape; tensor data is copied into the method.
  ET_NODISCARD ::executorch::runtime::Error set_input(
      const std::string& method_name,
      const ::executorch::runtime::EValue& input_value,
      size_t input_index);
  ET_NODISCARD ::executorch::runtime::Error set_input(
      const ::executorch::runtime::EValue& input_value, size_t input_index) {
    return set_input("forward", input_value, input_index);
  }
  // Sets every input of `method_name`; their count must match.
  ET_NODISCARD ::executorch::runtime::Error set_inputs(
      const std::string& method_name,
      const std::vector<::executorch::runtime::EValue>& input_values);
  ET_NODISCARD ::executorch::runtime::Error set_inputs(
      const std::vector<::executorch::runtime::EValue>& input_values) {
    return set_inputs("forward", input_values);
  }

  // Makes output `output_index` of `method_name` write into the data of
  // `output_value`, a tensor the caller keeps alive, with room for the
  // output. Only outputs that memory planning left unplanned accept a
  // buffer.
  ET_NODISCARD ::executorch::runtime::Error set_output(
      const std::string& method_name,
      ::executorch::runtime::EValue output_value,
      size_t output_index = 0);
  ET_NODISCARD ::executorch::runtime::Error set_output(
      ::executorch::runtime::EValue output_value, size_t output_index = 0) {
    return set_output("forward", std::move(output_value), output_index);
  }
  // set_output for every output, in order; their count must match.
  ET_NODISCARD ::executorch::runtime::Error set_outputs(
      const std::string& method_name,
      const std::vector<::executorch::runtime::EValue>& output_values);
  ET_NODISCARD ::executorch::runtime::Error set_outputs(
      const std::vector<::executorch::runtime::EValue>& output_values) {
    return set_outputs("forward", output_values);
  }

  // The outputs of the last run of `method_name` (loading it if needed),
  // without running it again.
  ::executorch::runtime::Result<std::vector<::executorch::runtime::EValue>>
  get_outputs(const std::string& method_name);
  ::executorch::runtime::Result<std::vector<::executorch::runtime::EValue>>
  get_outputs() {
    return get_outputs("forward");
  }
  ::executorch::runtime::Result<::executorch::runtime::EValue> get_output(
      const std::string& method_name, size_t output_index = 0);
  ::executorch::runtime::Result<::executorch::runtime::EValue> get_output(
      size_t output_index = 0) {
    return get_output("forward", output_index);
  }

 private:
  // A loaded method and the memory it runs in.
  struct LoadedMethod {
    // Null when the caller gave the planned memory.
    std::unique_ptr<PlannedMemory> planned_memory;
    std::unique_ptr<::executorch::runtime::MemoryManager> memory_manager;
    std::unique_ptr<::executorch::runtime::Method> method;
    // Buffers for outputs that memory planning left to the caller.
    std::vector<std::vector<uint8_t>> output_storage;
    // Which inputs have a value, so that a missing one is reported by
    // count rather than as an uninitialized tensor.
    std::vector<bool> input_is_set;
  };

  // The loaded method `method_name`, loading the program and the method on
  // first use.
  ::executorch::runtime::Result<LoadedMethod*> loaded_method(
      const std::string& method_name);

  // Opens the data files as one NamedDataMap (data_map_), once.
  ET_NODISCARD ::executorch::runtime::Error load_data_files();

  std::string file_path_;
  std::vector<std::string> data_files_;
  LoadMode load_mode_ = LoadMode::File;
  std::shared_ptr<::executorch::runtime::DataLoader> data_loader_;
  std::shared_ptr<::executorch::runtime::Program> program_;
  std::unique_ptr<::executorch::runtime::MemoryAllocator> memory_allocator_;
  std::unique_ptr<::executorch::runtime::MemoryAllocator> temp_allocator_;
  std::unique_ptr<::executorch::runtime::EventTracer> event_tracer_;
  // The constructor's data_map_loader, the data files' loaders and maps,
  // and the view of them all that methods are loaded with (null without
  // data files).
  std::unique_ptr<::executorch::runtime::DataLoader> data_map_loader_;
  std::vector<std::unique_ptr<::executorch::runtime::DataLoader>>
      data_file_loaders_;
  std::vector<std::unique_ptr<::executorch::runtime::NamedDataMap>> data_maps_;
  const ::executorch::runtime::NamedDataMap* data_map_ = nullptr;
  bool data_files_loaded_ = false;
  std::unordered_map<std::string, std::unique_ptr<LoadedMethod>> methods_;
  bool share_memory_arenas_ = false;
  size_t max_instructions_ = 0;
  // Planned buffers 0 and 1 of every method, with share_memory_arenas.
  std::unique_ptr<SharedArenas> shared_arenas_;
};

} // namespace extension
} // namespace executorch

namespace torch {
namespace executor {
using ::executorch::extension::Module;
} // namespace executor
} // namespace torch
