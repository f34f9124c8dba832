#include <executorch/extension/kernel_util/make_boxed_from_unboxed_functor.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <executorch/extension/tensor/tensor.h>

using executorch::aten::ArrayRef;
using executorch::aten::Scalar;
using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using executorch::extension::make_tensor_ptr;
using executorch::extension::TensorPtr;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::KernelRuntimeContext;
using executorch::runtime::OpFunction;
using executorch::runtime::Span;

namespace {

// out = a + alpha * b, with the context first.
Tensor& add_scaled_out(KernelRuntimeContext& context,
                       const Tensor& a,
                       const Tensor& b,
                       double alpha,
                       Tensor& out) {
  if (a.numel() != out.numel() || b.numel() != out.numel()) {
    context.fail(Error::InvalidArgument);
    return out;
  }
  for (ssize_t i = 0; i < out.numel(); ++i) {
    out.mutable_data_ptr<float>()[i] =
        a.const_data_ptr<float>()[i] +
        static_cast<float>(alpha) * b.const_data_ptr<float>()[i];
  }
  return out;
}

// Every other supported parameter kind, without the context: out[i] =
// (sum of tensors[k][i] + bias[i] + value) * (negate ? -1 : 1) * sizes[0],
// for the first `count` elements (all without it); records the rest.
struct Seen {
  std::string mode;
  ScalarType dtype = ScalarType::Undefined;
  size_t sizes = 0;
  bool had_bias = false;
};
Seen seen;

Tensor& combine_out(ArrayRef<Tensor> tensors,
                    const std::optional<Tensor>& bias,
                    const Scalar& value,
                    std::optional<int64_t> count,
                    ArrayRef<int64_t> sizes,
                    bool negate,
                    std::string_view mode,
                    ScalarType dtype,
                    Tensor& out) {
  seen = {std::string(mode), dtype, sizes.size(), bias.has_value()};
  const ssize_t n = count.has_value() ? *count : out.numel();
  for (ssize_t i = 0; i < n; ++i) {
    float total = static_cast<float>(value.to<double>());
    for (const Tensor& t : tensors) {
      total += t.const_data_ptr<float>()[i];
    }
    if (bias.has_value()) {
      total += bias->const_data_ptr<float>()[i];
    }
    out.mutable_data_ptr<float>()[i] =
        total * (negate ? -1.f : 1.f) * static_cast<float>(sizes[0]);
  }
  return out;
}

void no_arguments() {}

EXECUTORCH_LIBRARY(kernel_util_test, "add_scaled.out", add_scaled_out);
EXECUTORCH_LIBRARY(kernel_util_test, "combine.out", combine_out);

OpFunction lookup(const char* name) {
  auto function = executorch::runtime::get_op_function_from_registry(name);
  EXPECT_EQ(function.error(), Error::Ok) << name;
  return function.ok() ? *function : nullptr;
}

// Runs `function` on `values` (pointers to them, in order).
Error call(OpFunction function, std::vector<EValue>& values) {
  std::vector<EValue*> stack;
  for (EValue& value : values) {
    stack.push_back(&value);
  }
  KernelRuntimeContext context;
  function(context, Span<EValue*>(stack.data(), stack.size()));
  return context.failure_state();
}

std::vector<float> floats(const TensorPtr& t) {
  return std::vector<float>(t->const_data_ptr<float>(),
                            t->const_data_ptr<float>() + t->numel());
}

TEST(MakeBoxedFromUnboxedFunctor, LibraryMacroRegistersARunnableKernel) {
  OpFunction add = lookup("kernel_util_test::add_scaled.out");
  ASSERT_NE(add, nullptr);
  TensorPtr a = make_tensor_ptr({3}, std::vector<float>{1, 2, 3});
  TensorPtr b = make_tensor_ptr({3}, std::vector<float>{10, 20, 30});
  TensorPtr out = make_tensor_ptr({3}, std::vector<float>{0, 0, 0});
  // The emitter passes the out argument again as the result.
  std::vector<EValue> values = {
      EValue(*a), EValue(*b), EValue(0.5), EValue(*out), EValue(*out)};
  ASSERT_EQ(call(add, values), Error::Ok);
  EXPECT_EQ(floats(out), (std::vector<float>{6, 12, 18}));

  // An Int for a double parameter converts.
  values[2] = EValue(static_cast<int64_t>(2));
  ASSERT_EQ(call(add, values), Error::Ok);
  EXPECT_EQ(floats(out), (std::vector<float>{21, 42, 63}));
}

TEST(MakeBoxedFromUnboxedFunctor, EveryParameterKindConverts) {
  OpFunction combine = lookup("kernel_util_test::combine.out");
  ASSERT_NE(combine, nullptr);
  TensorPtr x = make_tensor_ptr({2}, std::vector<float>{1, 2});
  TensorPtr y = make_tensor_ptr({2}, std::vector<float>{10, 20});
  TensorPtr bias = make_tensor_ptr({2}, std::vector<float>{100, 200});
  TensorPtr out = make_tensor_ptr({2}, std::vector<float>{-1, -1});

  EValue tensor_values[] = {EValue(*x), EValue(*y)};
  EValue* tensor_pointers[] = {&tensor_values[0], &tensor_values[1]};
  Tensor tensor_scratch[2] = {*x, *x}; // overwritten by each unboxing
  executorch::runtime::BoxedEvalueList<Tensor> tensors(
      tensor_pointers, tensor_scratch, 2);
  EValue size_values[] = {EValue(static_cast<int64_t>(3))};
  EValue* size_pointers[] = {&size_values[0]};
  int64_t size_scratch[1];
  executorch::runtime::BoxedEvalueList<int64_t> sizes(
      size_pointers, size_scratch, 1);

  std::vector<EValue> values = {EValue(tensors),
                                EValue(*bias),
                                EValue(Scalar(0.5)),
                                EValue(),
                                EValue(sizes),
                                EValue(true),
                                EValue("sum", 3),
                                EValue(static_cast<int64_t>(ScalarType::Float)),
                                EValue(*out)};
  ASSERT_EQ(call(combine, values), Error::Ok);
  EXPECT_EQ(floats(out), (std::vector<float>{-334.5f, -667.5f}));
  EXPECT_EQ(seen.mode, "sum");
  EXPECT_EQ(seen.dtype, ScalarType::Float);
  EXPECT_EQ(seen.sizes, 1u);
  EXPECT_TRUE(seen.had_bias);

  // A Double where the optional int is: refused, naming both kinds.
  values[3] = EValue(2.0);
  EXPECT_EQ(call(combine, values), Error::InvalidArgument);

  // None for the optional tensor, a value for the optional int.
  values[1] = EValue();
  values[3] = EValue(static_cast<int64_t>(1));
  values[5] = EValue(false);
  ASSERT_EQ(call(combine, values), Error::Ok);
  EXPECT_EQ(floats(out), (std::vector<float>{34.5f, -667.5f}));
  EXPECT_FALSE(seen.had_bias);
}

TEST(MakeBoxedFromUnboxedFunctor, AValueOfAnotherTypeFailsTheCall) {
  OpFunction add = lookup("kernel_util_test::add_scaled.out");
  ASSERT_NE(add, nullptr);
  TensorPtr a = make_tensor_ptr({2}, std::vector<float>{1, 2});
  TensorPtr out = make_tensor_ptr({2}, std::vector<float>{7, 7});
  // An Int where the schema has a Tensor: no abort, no write.
  std::vector<EValue> values = {
      EValue(*a), EValue(static_cast<int64_t>(3)), EValue(1.0), EValue(*out)};
  EXPECT_EQ(call(add, values), Error::InvalidArgument);
  EXPECT_EQ(floats(out), (std::vector<float>{7, 7}));
  // A Bool is not a double.
  values[1] = EValue(*a);
  values[2] = EValue(true);
  EXPECT_EQ(call(add, values), Error::InvalidArgument);
  // None is not a Tensor.
  values[2] = EValue(1.0);
  values[3] = EValue();
  EXPECT_EQ(call(add, values), Error::InvalidArgument);
  EXPECT_EQ(floats(out), (std::vector<float>{7, 7}));
}

TEST(MakeBoxedFromUnboxedFunctor, TooFewValuesFailTheCall) {
  OpFunction add = lookup("kernel_util_test::add_scaled.out");
  ASSERT_NE(add, nullptr);
  TensorPtr a = make_tensor_ptr({2}, std::vector<float>{1, 2});
  std::vector<EValue> values = {EValue(*a), EValue(*a), EValue(1.0)};
  EXPECT_EQ(call(add, values), Error::InvalidArgument);
  std::vector<EValue> none;
  EXPECT_EQ(call(add, none), Error::InvalidArgument);
}

TEST(MakeBoxedFromUnboxedFunctor, UpstreamsLowerLevelSpellings) {
  // EXECUTORCH_FN with and without a name, the deprecated alias, and a
  // kernel of no parameters.
  static constexpr char kName[] = "kernel_util_test::no_arguments";
  const executorch::runtime::Kernel kernels[] = {
      executorch::extension::make_boxed_kernel(
          kName, EXECUTORCH_FN(no_arguments, kName)),
      torch::executor::make_boxed_kernel("kernel_util_test::add_scaled_again",
                                         EXECUTORCH_FN(add_scaled_out))};
  ASSERT_EQ(executorch::runtime::register_kernels(
                Span<const executorch::runtime::Kernel>(kernels, 2)),
            Error::Ok);
  std::vector<EValue> values;
  EXPECT_EQ(call(lookup(kName), values), Error::Ok);
  std::vector<EValue> short_stack = {EValue()};
  EXPECT_EQ(call(lookup("kernel_util_test::add_scaled_again"), short_stack),
            Error::InvalidArgument);
}

TEST(MakeBoxedFromUnboxedFunctor, ASecondRegistrationOfTheSameNameFails) {
  EXPECT_EQ(executorch::runtime::register_kernel(
                executorch::extension::make_boxed_kernel(
                    "kernel_util_test::add_scaled.out",
                    EXECUTORCH_FN(add_scaled_out))),
            Error::RegistrationAlreadyRegistered);
}

} // namespace
