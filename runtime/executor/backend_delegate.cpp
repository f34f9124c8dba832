#include <executorch/runtime/executor/backend_delegate.h>

#include <new>

#include <executorch/runtime/executor/program.h>
#include <executorch/schema/program_generated.h>

namespace executorch {
namespace runtime {

namespace {

Result<FreeableBuffer> load_processed(
    const executorch_flatbuffer::BackendDelegate* delegate,
    const Program* program,
    size_t delegate_index) {
  const auto* processed = delegate->processed();
  ET_CHECK_OR_RETURN_ERROR(processed != nullptr,
                           InvalidProgram,
                           "Delegate %zu ('%s') has no processed data",
                           delegate_index,
                           delegate->id()->c_str());
  const bool is_inline =
      processed->location() == executorch_flatbuffer::DataLocation::INLINE;
  if (!is_inline &&
      processed->location() != executorch_flatbuffer::DataLocation::SEGMENT) {
    ET_LOG(Error,
           "Delegate %zu ('%s'): unknown processed data location %d",
           delegate_index,
           delegate->id()->c_str(),
           static_cast<int>(processed->location()));
    return Error::InvalidProgram;
  }
  Result<FreeableBuffer> data =
      is_inline ? program->get_inline_delegate_data(processed->index())
                : program->LoadSegment(DataLoader::SegmentInfo(
                      DataLoader::SegmentInfo::Type::Backend,
                      processed->index(),
                      delegate->id()->c_str()));
  if (!data.ok()) {
    // The program's log line says why; this one says which delegate.
    ET_LOG(Error,
           "Delegate %zu ('%s'): cannot load its processed data (%s %u)",
           delegate_index,
           delegate->id()->c_str(),
           is_inline ? "inline delegate data index" : "segment index",
           processed->index());
  }
  return data;
}

// Copies the serialized compile specs into method memory.
Result<ArrayRef<CompileSpec>> load_compile_specs(
    const executorch_flatbuffer::BackendDelegate* delegate,
    MemoryAllocator* allocator,
    size_t delegate_index) {
  const auto* specs = delegate->compile_specs();
  const size_t count = specs == nullptr ? 0 : specs->size();
  if (count == 0) {
    return ArrayRef<CompileSpec>();
  }
  CompileSpec* out = allocator->allocateList<CompileSpec>(count);
  ET_CHECK_OR_RETURN_ERROR(out != nullptr,
                           MemoryAllocationFailed,
                           "Delegate %zu: no memory for %zu compile specs",
                           delegate_index,
                           count);
  for (size_t i = 0; i < count; ++i) {
    const auto* spec = specs->Get(i);
    ET_CHECK_OR_RETURN_ERROR(spec->key() != nullptr,
                             InvalidProgram,
                             "Delegate %zu compile spec %zu has no key",
                             delegate_index,
                             i);
    const auto* value = spec->value();
    // Backends receive the bytes as read-only data in practice; the
    // interface's SizedBuffer is non-const for upstream compatibility.
    out[i].key = spec->key()->c_str();
    out[i].value.buffer =
        value == nullptr ? nullptr : const_cast<uint8_t*>(value->data());
    out[i].value.nbytes = value == nullptr ? 0 : value->size();
  }
  return ArrayRef<CompileSpec>(out, count);
}

} // namespace

Error BackendDelegate::Init(
    const executorch_flatbuffer::BackendDelegate* delegate,
    const Program* program,
    BackendInitContext& context,
    size_t delegate_index,
    BackendDelegate* out) {
  ET_CHECK_OR_RETURN_ERROR(delegate->id() != nullptr,
                           InvalidProgram,
                           "Delegate %zu has no backend id",
                           delegate_index);
  const char* id = delegate->id()->c_str();
  const BackendInterface* backend = get_backend_class(id);
  ET_CHECK_OR_RETURN_ERROR(backend != nullptr,
                           NotFound,
                           "Delegate %zu needs backend '%s', which is not "
                           "registered: link the backend library into the "
                           "application",
                           delegate_index,
                           id);
  ET_CHECK_OR_RETURN_ERROR(backend->is_available(),
                           NotFound,
                           "Backend '%s' (delegate %zu) is not available on "
                           "this device",
                           id,
                           delegate_index);
  ET_UNWRAP(FreeableBuffer processed,
            load_processed(delegate, program, delegate_index));
  ET_UNWRAP(ArrayRef<CompileSpec> specs,
            load_compile_specs(
                delegate, context.get_runtime_allocator(), delegate_index));
  Result<DelegateHandle*> handle = backend->init(context, &processed, specs);
  if (!handle.ok()) {
    ET_LOG(Error,
           "Backend '%s' failed to initialize delegate %zu: %s",
           id,
           delegate_index,
           to_string(handle.error()));
    return handle.error();
  }
  new (out) BackendDelegate(id, backend, *handle, std::move(processed));
  return Error::Ok;
}

BackendDelegate::~BackendDelegate() {
  backend_->destroy(handle_);
}

} // namespace runtime
} // namespace executorch
