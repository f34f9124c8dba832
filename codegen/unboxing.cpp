#include <executorch/codegen/unboxing.h>

#include <cstring>

#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace codegen {

using runtime::EValue;

bool check_stack(runtime::KernelRuntimeContext& context,
                 const char* op_name,
                 runtime::Span<EValue*> stack,
                 runtime::Span<const ArgKind> kinds) {
  if (stack.size() < kinds.size() || stack.size() > kinds.size() + 1) {
    ET_LOG(Error,
           "%s: expected %zu arguments (and optionally a result), got %zu",
           op_name,
           kinds.size(),
           stack.size());
    context.fail(runtime::Error::InvalidProgram);
    return false;
  }
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (stack[i] == nullptr || !evalue_matches(*stack[i], kinds[i])) {
      ET_LOG(Error,
             "%s: argument %zu should be %s but is %s",
             op_name,
             i,
             runtime::arg_kind_name(kinds[i]),
             stack[i] == nullptr ? "missing"
                                 : runtime::tag_to_string(stack[i]->tag));
      context.fail(runtime::Error::InvalidArgument);
      return false;
    }
  }
  return true;
}

runtime::Error register_once(runtime::Span<const runtime::Kernel> kernels) {
  if (kernels.size() == 0) {
    return runtime::Error::Ok;
  }
  // register_kernels adds all of a table or nothing, so finding its first
  // kernel registered with the same function means the table is in.
  const runtime::Kernel& first = kernels[0];
  for (const runtime::Kernel& k : runtime::get_registered_kernels()) {
    if (k.op_ == first.op_ && std::strcmp(k.name_, first.name_) == 0) {
      return runtime::Error::Ok;
    }
  }
  return runtime::register_kernels(kernels);
}

} // namespace codegen
} // namespace executorch
