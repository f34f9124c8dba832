#pragma once

// KernelRuntimeContext: what a kernel may use besides its arguments. A
// kernel reports failure by calling fail(); it never aborts. The method
// checks failure_state() after every kernel call.

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace runtime {

class EventTracer;

class KernelRuntimeContext {
 public:
  explicit KernelRuntimeContext(EventTracer* event_tracer = nullptr,
                                MemoryAllocator* temp_allocator = nullptr)
      : event_tracer_(event_tracer), temp_allocator_(temp_allocator) {}

  void fail(Error error) {
    failure_state_ = error;
  }
  ET_NODISCARD Error failure_state() const {
    return failure_state_;
  }

  // Scratch memory valid until the kernel returns.
  Result<void*> allocate_temp(size_t size, size_t alignment = alignof(void*)) {
    ET_CHECK_OR_RETURN_ERROR(temp_allocator_ != nullptr,
                             NotFound,
                             "No temp allocator was provided to this kernel");
    void* temp = temp_allocator_->allocate(size, alignment);
    ET_CHECK_OR_RETURN_ERROR(temp != nullptr,
                             MemoryAllocationFailed,
                             "Failed to allocate %zu bytes of temp memory",
                             size);
    return temp;
  }

  EventTracer* internal_event_tracer() {
    return event_tracer_;
  }

 private:
  EventTracer* event_tracer_;
  MemoryAllocator* temp_allocator_;
  Error failure_state_ = Error::Ok;
};

} // namespace runtime
} // namespace executorch

namespace torch {
namespace executor {
using ::executorch::runtime::KernelRuntimeContext;
using RuntimeContext = ::executorch::runtime::KernelRuntimeContext;
} // namespace executor
} // namespace torch

// Fails the kernel and returns `retval` when `cond` is false.
#define ET_KERNEL_CHECK_MSG(context, cond, error, retval, message, ...)   \
  do {                                                                    \
    if (ET_UNLIKELY(!(cond))) {                                           \
      ET_LOG(Error, "Check failed (%s): " message, #cond, ##__VA_ARGS__); \
      (context).fail(::executorch::runtime::Error::error);                \
      return retval;                                                      \
    }                                                                     \
  } while (0)

#define ET_KERNEL_CHECK(context, cond, error, retval) \
  ET_KERNEL_CHECK_MSG(context, cond, error, retval, "%s", "")
