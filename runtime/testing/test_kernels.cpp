#include <executorch/runtime/testing/test_kernels.h>

#include <executorch/runtime/kernel/operator_registry.h>
#include <executorch/runtime/kernel/operator_schema.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace runtime {
namespace testing {

namespace {

using ::executorch::aten::ScalarType;
using ::executorch::aten::Tensor;

bool same_float_shape(KernelRuntimeContext& context,
                      const Tensor& a,
                      const Tensor& out) {
  if (a.scalar_type() != ScalarType::Float ||
      out.scalar_type() != ScalarType::Float || a.numel() != out.numel()) {
    context.fail(Error::InvalidArgument);
    return false;
  }
  return true;
}

// Arguments: self, out, (return value).
void add_one_out(KernelRuntimeContext& context, Span<EValue*> args) {
  const Tensor& self = args[0]->toTensor();
  Tensor& out = args[1]->toTensor();
  if (!same_float_shape(context, self, out)) {
    return;
  }
  for (ssize_t i = 0; i < self.numel(); ++i) {
    out.mutable_data_ptr<float>()[i] = self.const_data_ptr<float>()[i] + 1.0f;
  }
}

// Arguments: self, other, alpha, out, (return value).
void add_out(KernelRuntimeContext& context, Span<EValue*> args) {
  const Tensor& self = args[0]->toTensor();
  const Tensor& other = args[1]->toTensor();
  const double alpha = args[2]->toScalar().to<double>();
  Tensor& out = args[3]->toTensor();
  if (!same_float_shape(context, self, out) ||
      !same_float_shape(context, other, out)) {
    return;
  }
  for (ssize_t i = 0; i < self.numel(); ++i) {
    out.mutable_data_ptr<float>()[i] =
        self.const_data_ptr<float>()[i] +
        static_cast<float>(alpha) * other.const_data_ptr<float>()[i];
  }
}

void fail_out(KernelRuntimeContext& context, Span<EValue*> args) {
  context.fail(Error::InvalidArgument);
}

// Arguments: value, out.
void set_int_out(KernelRuntimeContext& context, Span<EValue*> args) {
  *args[1] = EValue(args[0]->toInt());
}

// Arguments: self, scale, out, (return value). Refuses a scale that is not
// > 0 at every call, and (check_scale_args) at load when the program fixes
// it.
void scale_out(KernelRuntimeContext& context, Span<EValue*> args) {
  const Tensor& self = args[0]->toTensor();
  const double scale = args[1]->toDouble();
  Tensor& out = args[2]->toTensor();
  if (!(scale > 0) || !same_float_shape(context, self, out)) {
    context.fail(Error::InvalidArgument);
    return;
  }
  for (ssize_t i = 0; i < self.numel(); ++i) {
    out.mutable_data_ptr<float>()[i] =
        self.const_data_ptr<float>()[i] * static_cast<float>(scale);
  }
}

bool check_scale_args(Span<EValue* const> args, const bool* fixed) {
  if (fixed[1] && !(args[1]->toDouble() > 0)) {
    ET_LOG(Error,
           "test::scale.out: scale %g is not > 0",
           args[1]->toDouble());
    return false;
  }
  return true;
}

} // namespace

void register_test_kernels() {
  static const Kernel kernels[] = {
      Kernel("test::add_one.out", add_one_out),
      Kernel("aten::add.out", add_out),
      Kernel("test::fail.out", fail_out),
      Kernel("test::set_int.out", set_int_out),
      Kernel("test::scale.out", scale_out),
  };
  // Their schemas, so that Method checks calls to them at load as it does
  // for a generated kernel library.
  static constexpr ArgKind kTensorOut[] = {ArgKind::Tensor, ArgKind::Tensor};
  static constexpr ArgKind kAdd[] = {
      ArgKind::Tensor, ArgKind::Tensor, ArgKind::Scalar, ArgKind::Tensor};
  static constexpr ArgKind kIntOut[] = {ArgKind::Int, ArgKind::Int};
  static constexpr ArgKind kScale[] = {
      ArgKind::Tensor, ArgKind::Double, ArgKind::Tensor};
  static const OperatorSchema schemas[] = {
      {"test::add_one.out", Span<const ArgKind>(kTensorOut), nullptr, 0x2},
      {"aten::add.out", Span<const ArgKind>(kAdd), nullptr, 0x8},
      {"test::fail.out", Span<const ArgKind>(kTensorOut), nullptr, 0x2},
      {"test::set_int.out", Span<const ArgKind>(kIntOut), nullptr, 0x2},
      {"test::scale.out", Span<const ArgKind>(kScale), check_scale_args, 0x4},
  };
  static const bool registered =
      register_operator_schemas(Span<const OperatorSchema>(schemas)) ==
          Error::Ok &&
      register_kernels(Span<const Kernel>(kernels)) == Error::Ok;
  (void)registered;
}

} // namespace testing
} // namespace runtime
} // namespace executorch
