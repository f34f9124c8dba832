// my_ops::scaled_tanh.out: out = scale * tanh(input), for float and double.
// The declaration comes from the NativeFunctions.h that codegen generates
// from custom_ops.yaml, so a signature that does not match the schema fails
// to compile.

#include <cmath>

#include <NativeFunctions.h>

namespace custom {
namespace native {

using ::executorch::aten::ScalarType;
using ::executorch::runtime::Error;

Tensor& scaled_tanh_out(KernelRuntimeContext& context,
                        const Tensor& input,
                        double scale,
                        Tensor& out) {
  if (input.scalar_type() != out.scalar_type()) {
    ET_LOG(Error,
           "my_ops::scaled_tanh.out: out has dtype %s, input has %s",
           ::executorch::runtime::toString(out.scalar_type()),
           ::executorch::runtime::toString(input.scalar_type()));
    context.fail(Error::InvalidArgument);
    return out;
  }
  if (::executorch::runtime::resize_tensor(out, input.sizes()) != Error::Ok) {
    ET_LOG(Error,
           "my_ops::scaled_tanh.out: cannot resize out to input's shape");
    context.fail(Error::InvalidArgument);
    return out;
  }
  // Tensors here are contiguous in their dim order, and input and out share
  // one, so elements correspond one to one.
  ET_SWITCH_FLOAT_TYPES(
      input.scalar_type(), context, "my_ops::scaled_tanh.out", CTYPE, [&]() {
        const CTYPE* in = input.const_data_ptr<CTYPE>();
        CTYPE* result = out.mutable_data_ptr<CTYPE>();
        const CTYPE factor = static_cast<CTYPE>(scale);
        for (ssize_t i = 0; i < input.numel(); ++i) {
          result[i] = factor * std::tanh(in[i]);
        }
      });
  return out;
}

} // namespace native
} // namespace custom
