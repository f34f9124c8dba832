#pragma once

// The backend (delegate) interface. A backend turns the blob that its
// ahead-of-time preprocess() produced into an executable handle at method
// load (init), runs it for each DelegateCall (execute) and releases it with
// the method (destroy). Backends are found by id in a fixed-size registry
// filled by register_backend().

#include <executorch/runtime/core/array_ref.h>
#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/freeable_buffer.h>
#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/core/named_data_map.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/core/span.h>

#ifndef ET_MAX_REGISTERED_BACKENDS
#define ET_MAX_REGISTERED_BACKENDS 16
#endif

namespace executorch {
namespace runtime {

class EventTracer;

struct SizedBuffer {
  void* buffer;
  size_t nbytes;
};

// One key/value compile option, as given to the partitioner ahead of time.
struct CompileSpec {
  const char* key;
  SizedBuffer value;
};

using DelegateHandle = void;

// What a backend may use during init().
class BackendInitContext final {
 public:
  explicit BackendInitContext(MemoryAllocator* runtime_allocator,
                              EventTracer* event_tracer = nullptr,
                              const char* method_name = nullptr,
                              const NamedDataMap* named_data_map = nullptr)
      : runtime_allocator_(runtime_allocator),
        event_tracer_(event_tracer),
        method_name_(method_name),
        named_data_map_(named_data_map) {}

  // Allocator for memory that lives as long as the method.
  MemoryAllocator* get_runtime_allocator() {
    return runtime_allocator_;
  }
  EventTracer* event_tracer() {
    return event_tracer_;
  }
  const char* get_method_name() const {
    return method_name_;
  }
  // Data the backend may look up by key: the program's named data and the
  // external data given to load_method (null when there is neither). Valid
  // during init(); buffers it returns are the backend's to keep.
  const NamedDataMap* get_named_data_map() const {
    return named_data_map_;
  }

 private:
  MemoryAllocator* runtime_allocator_;
  EventTracer* event_tracer_;
  const char* method_name_;
  const NamedDataMap* named_data_map_;
};

// What a backend may use during execute().
class BackendExecutionContext final {
 public:
  explicit BackendExecutionContext(EventTracer* event_tracer = nullptr,
                                   MemoryAllocator* temp_allocator = nullptr,
                                   const char* method_name = nullptr)
      : event_tracer_(event_tracer),
        temp_allocator_(temp_allocator),
        method_name_(method_name) {}

  EventTracer* event_tracer() {
    return event_tracer_;
  }
  // Scratch memory valid until execute() returns; null if none was given.
  void* allocate(size_t size, size_t alignment = alignof(void*)) {
    return temp_allocator_ == nullptr
               ? nullptr
               : temp_allocator_->allocate(size, alignment);
  }
  MemoryAllocator* get_temp_allocator() {
    return temp_allocator_;
  }
  const char* get_method_name() const {
    return method_name_;
  }

 private:
  EventTracer* event_tracer_;
  MemoryAllocator* temp_allocator_;
  const char* method_name_;
};

class BackendInterface {
 public:
  virtual ~BackendInterface() = 0;

  // False when the backend cannot run on this device (missing hardware).
  ET_NODISCARD virtual bool is_available() const = 0;

  // Prepares `processed` (the preprocessed blob; the backend may Free() it
  // once it no longer needs it) for execution. Returns a handle owned by the
  // backend, typically placed in context.get_runtime_allocator() memory.
  ET_NODISCARD virtual Result<DelegateHandle*> init(
      BackendInitContext& context,
      FreeableBuffer* processed,
      ArrayRef<CompileSpec> compile_specs) const = 0;

  // Runs the delegated subgraph. `args` are the DelegateCall's values:
  // inputs then outputs, in the order the lowered subgraph declares them.
  ET_NODISCARD virtual Error execute(BackendExecutionContext& context,
                                     DelegateHandle* handle,
                                     Span<EValue*> args) const = 0;

  // How many of a DelegateCall's args, counted from the end, `handle` writes:
  // its outputs. Method::load refuses a program that passes a constant tensor
  // there (constants may live in a read-only mapping of the file). The
  // default, 0, claims nothing and leaves every arg unchecked.
  virtual size_t num_outputs(DelegateHandle* handle) const {
    return 0;
  }

  // Releases what init() acquired. The handle's memory belongs to the
  // runtime allocator and is not freed here.
  virtual void destroy(DelegateHandle* handle) const {}
};

struct Backend {
  const char* name;
  BackendInterface* backend;
};

// Adds a backend under its name. Fails with
// RegistrationAlreadyRegistered for a duplicate name,
// RegistrationExceedingMaxKernels when the table is full.
ET_NODISCARD Error register_backend(const Backend& backend);

// The backend registered under `name`, or nullptr.
BackendInterface* get_backend_class(const char* name);

size_t get_num_registered_backends();
Result<const char*> get_backend_name(size_t index);

} // namespace runtime
} // namespace executorch

namespace torch {
namespace executor {
using ::executorch::runtime::Backend;
using ::executorch::runtime::BackendExecutionContext;
using ::executorch::runtime::BackendInitContext;
using ::executorch::runtime::BackendInterface;
using ::executorch::runtime::CompileSpec;
using ::executorch::runtime::DelegateHandle;
using ::executorch::runtime::get_backend_class;
using ::executorch::runtime::register_backend;
using ::executorch::runtime::SizedBuffer;
} // namespace executor
} // namespace torch
