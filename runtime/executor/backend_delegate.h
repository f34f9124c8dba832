#pragma once

// BackendDelegate: one entry of ExecutionPlan.delegates, bound to its
// registered backend. init() hands the backend its processed blob and compile
// specs; the destructor calls the backend's destroy().

#include <cstddef>

#include <executorch/runtime/backend/interface.h>

namespace executorch_flatbuffer {
struct BackendDelegate;
} // namespace executorch_flatbuffer

namespace executorch {
namespace runtime {

class Program;

class BackendDelegate final {
 public:
  // Initializes `out` (uninitialized memory) in place. On failure `out` is
  // left unconstructed.
  ET_NODISCARD static Error Init(
      const executorch_flatbuffer::BackendDelegate* delegate,
      const Program* program,
      BackendInitContext& context,
      size_t delegate_index,
      BackendDelegate* out);

  ET_NODISCARD Error Execute(BackendExecutionContext& context,
                             Span<EValue*> args) const {
    return backend_->execute(context, handle_, args);
  }

  // The trailing args Execute() writes (BackendInterface::num_outputs).
  size_t num_outputs() const {
    return backend_->num_outputs(handle_);
  }

  const char* id() const {
    return id_;
  }

  ~BackendDelegate();
  BackendDelegate(const BackendDelegate&) = delete;
  BackendDelegate& operator=(const BackendDelegate&) = delete;

 private:
  BackendDelegate(const char* id,
                  const BackendInterface* backend,
                  DelegateHandle* handle,
                  FreeableBuffer&& processed)
      : id_(id),
        backend_(backend),
        handle_(handle),
        processed_(std::move(processed)) {}

  const char* id_;
  const BackendInterface* backend_;
  DelegateHandle* handle_;
  // Kept until destroy for backends that execute out of the blob; a backend
  // that copied what it needs may Free() it during init.
  FreeableBuffer processed_;
};

} // namespace runtime
} // namespace executorch
