#include <executorch/devtools/bundled_program/bundled_program.h>

#include <cmath>
#include <cstring>

#include <flatbuffers/flatbuffers.h>

#include <executorch/devtools/bundled_program/bundled_program_schema_generated.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>
#include <executorch/runtime/core/portable_type/half.h>
#include <executorch/runtime/executor/schema_util.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace bundled_program {

using ::executorch::aten::ScalarType;
using ::executorch::aten::Tensor;
using ::executorch::runtime::Error;
using ::executorch::runtime::EValue;
using ::executorch::runtime::Method;
using ::executorch::runtime::Result;
using ::executorch::runtime::etensor::TensorImpl;

namespace fb = ::bundled_program_flatbuffer;

namespace {

// Largest rank of a bundled tensor.
constexpr size_t kMaxDim = 16;

// Test case `testset_idx` of the suite of `method_name`.
Result<const fb::BundledMethodTestCase*> find_test_case(
    SerializedBundledProgram* bundled_program_ptr,
    const char* method_name,
    size_t testset_idx) {
  ET_CHECK_OR_RETURN_ERROR(bundled_program_ptr != nullptr,
                           InvalidArgument,
                           "Bundled program: null pointer");
  const auto* program = fb::GetBundledProgram(bundled_program_ptr);
  const auto* suites = program->method_test_suites();
  for (size_t i = 0; suites != nullptr && i < suites->size(); ++i) {
    const auto* suite = suites->Get(i);
    if (suite->method_name() == nullptr ||
        std::strcmp(suite->method_name()->c_str(), method_name) != 0) {
      continue;
    }
    const size_t count =
        suite->test_cases() == nullptr ? 0 : suite->test_cases()->size();
    ET_CHECK_OR_RETURN_ERROR(testset_idx < count,
                             InvalidArgument,
                             "Bundled program: method '%s' has %zu test "
                             "cases; test case %zu does not exist",
                             method_name,
                             count,
                             testset_idx);
    return suite->test_cases()->Get(testset_idx);
  }
  ET_LOG(Error, "Bundled program: no test suite for method '%s'", method_name);
  return Error::NotFound;
}

// A tensor over a bundled tensor's data; sizes, dim order and strides live
// in the caller's arrays.
struct BundledTensor {
  ::executorch::aten::SizesType sizes[kMaxDim];
  ::executorch::aten::DimOrderType dim_order[kMaxDim];
  ::executorch::aten::StridesType strides[kMaxDim];
  TensorImpl impl{ScalarType::Float, 0, nullptr};
};

// `method`, `test_case`, `what` and `index` name the value in errors.
Error make_tensor(const fb::Tensor* bundled,
                  const char* method,
                  size_t test_case,
                  const char* what,
                  size_t index,
                  BundledTensor* out) {
  const size_t dim = bundled->sizes() == nullptr ? 0 : bundled->sizes()->size();
  ET_CHECK_OR_RETURN_ERROR(
      dim <= kMaxDim,
      InvalidProgram,
      "Bundled program: method '%s' test case %zu %s %zu: rank %zu above %zu",
      method,
      test_case,
      what,
      index,
      dim,
      kMaxDim);
  const size_t order_size =
      bundled->dim_order() == nullptr ? 0 : bundled->dim_order()->size();
  ET_CHECK_OR_RETURN_ERROR(order_size == 0 || order_size == dim,
                           InvalidProgram,
                           "Bundled program: method '%s' test case %zu %s %zu: "
                           "dim_order has %zu entries "
                           "for rank %zu",
                           method,
                           test_case,
                           what,
                           index,
                           order_size,
                           dim);
  size_t numel = 1;
  bool seen[kMaxDim] = {};
  for (size_t d = 0; d < dim; ++d) {
    const int32_t size = bundled->sizes()->Get(d);
    ET_CHECK_OR_RETURN_ERROR(size >= 0,
                             InvalidProgram,
                             "Bundled program: method '%s' test case %zu %s "
                             "%zu: negative size %d at dim "
                             "%zu",
                             method,
                             test_case,
                             what,
                             index,
                             size,
                             d);
    out->sizes[d] = size;
    numel *= static_cast<size_t>(size);
    const uint8_t order = order_size == 0 ? d : bundled->dim_order()->Get(d);
    ET_CHECK_OR_RETURN_ERROR(
        order < dim && !seen[order],
        InvalidProgram,
        "Bundled program: method '%s' test case %zu %s %zu: dim_order is not a "
        "permutation of 0..%zu",
        method,
        test_case,
        what,
        index,
        dim - 1);
    seen[order] = true;
    out->dim_order[d] = order;
  }
  // Strides from the dim order: the innermost dim is contiguous.
  ::executorch::aten::StridesType stride = 1;
  for (size_t k = dim; k > 0; --k) {
    const size_t d = out->dim_order[k - 1];
    out->strides[d] = stride;
    stride *= out->sizes[d];
  }
  const auto type = static_cast<ScalarType>(bundled->scalar_type());
  ET_CHECK_OR_RETURN_ERROR(
      ::executorch::runtime::internal::is_valid_scalar_type(
          static_cast<int8_t>(bundled->scalar_type())),
      InvalidProgram,
      "Bundled program: method '%s' test case %zu %s %zu: unknown scalar type "
      "%d",
      method,
      test_case,
      what,
      index,
      static_cast<int>(bundled->scalar_type()));
  const size_t nbytes =
      numel * ::executorch::runtime::etensor::elementSize(type);
  const size_t data_size =
      bundled->data() == nullptr ? 0 : bundled->data()->size();
  ET_CHECK_OR_RETURN_ERROR(data_size == nbytes,
                           InvalidProgram,
                           "Bundled program: method '%s' test case %zu %s %zu: "
                           "%zu bytes of data for a "
                           "tensor of %zu bytes",
                           method,
                           test_case,
                           what,
                           index,
                           data_size,
                           nbytes);
  out->impl = TensorImpl(
      type,
      static_cast<ssize_t>(dim),
      out->sizes,
      data_size == 0 ? nullptr : const_cast<uint8_t*>(bundled->data()->data()),
      out->dim_order,
      out->strides);
  return Error::Ok;
}

// Element `i` of a tensor as a double.
bool element(const Tensor& tensor, size_t i, double* out) {
  const void* data = tensor.const_data_ptr();
  switch (tensor.scalar_type()) {
#define ET_BUNDLED_CASE(type, name)                                \
  case ScalarType::name:                                           \
    *out = static_cast<double>(static_cast<const type*>(data)[i]); \
    return true;
    ET_BUNDLED_CASE(uint8_t, Byte)
    ET_BUNDLED_CASE(int8_t, Char)
    ET_BUNDLED_CASE(int16_t, Short)
    ET_BUNDLED_CASE(int32_t, Int)
    ET_BUNDLED_CASE(int64_t, Long)
    ET_BUNDLED_CASE(float, Float)
    ET_BUNDLED_CASE(double, Double)
    ET_BUNDLED_CASE(bool, Bool)
#undef ET_BUNDLED_CASE
    case ScalarType::Half:
      *out = static_cast<float>(
          static_cast<const ::executorch::aten::Half*>(data)[i]);
      return true;
    case ScalarType::BFloat16:
      *out = static_cast<float>(
          static_cast<const ::executorch::aten::BFloat16*>(data)[i]);
      return true;
    default:
      return false;
  }
}

// Offset of element `i` (row-major over sizes) in a strided tensor.
size_t strided_offset(const Tensor& tensor, size_t i) {
  size_t offset = 0;
  for (ssize_t d = tensor.dim(); d > 0; --d) {
    const size_t size = static_cast<size_t>(tensor.size(d - 1));
    offset += (i % size) * static_cast<size_t>(tensor.strides()[d - 1]);
    i /= size;
  }
  return offset;
}

} // namespace

bool is_bundled_program(void* file_data, size_t file_data_len) {
  return file_data != nullptr && file_data_len >= 8 &&
         fb::BundledProgramBufferHasIdentifier(file_data);
}

Error get_program_data(void* file_data,
                       size_t file_data_len,
                       const void** out_program_data,
                       size_t* out_program_data_len) {
  ET_CHECK_OR_RETURN_ERROR(
      out_program_data != nullptr && out_program_data_len != nullptr,
      InvalidArgument,
      "get_program_data: null output");
  if (!is_bundled_program(file_data, file_data_len)) {
    *out_program_data = file_data;
    *out_program_data_len = file_data_len;
    return Error::Ok;
  }
  flatbuffers::Verifier verifier(static_cast<const uint8_t*>(file_data),
                                 file_data_len);
  ET_CHECK_OR_RETURN_ERROR(
      fb::VerifyBundledProgramBuffer(verifier),
      InvalidProgram,
      "Bundled program of %zu bytes fails verification: an offset or length "
      "lies outside the file (truncated or corrupted)",
      file_data_len);
  const auto* program = fb::GetBundledProgram(file_data)->program();
  ET_CHECK_OR_RETURN_ERROR(program != nullptr && program->size() > 0,
                           InvalidProgram,
                           "Bundled program has no program (field 'program' "
                           "is empty)");
  *out_program_data = program->data();
  *out_program_data_len = program->size();
  return Error::Ok;
}

Result<size_t> num_test_cases(SerializedBundledProgram* bundled_program_ptr,
                              const char* method_name) {
  ET_CHECK_OR_RETURN_ERROR(bundled_program_ptr != nullptr,
                           InvalidArgument,
                           "num_test_cases: null bundled program");
  const auto* suites =
      fb::GetBundledProgram(bundled_program_ptr)->method_test_suites();
  for (size_t i = 0; suites != nullptr && i < suites->size(); ++i) {
    const auto* suite = suites->Get(i);
    if (suite->method_name() != nullptr &&
        std::strcmp(suite->method_name()->c_str(), method_name) == 0) {
      return suite->test_cases() == nullptr ? 0 : suite->test_cases()->size();
    }
  }
  return 0;
}

Error load_bundled_input(Method& method,
                         SerializedBundledProgram* bundled_program_ptr,
                         size_t testset_idx) {
  const char* name = method.method_meta().name();
  ET_UNWRAP(const auto* test_case,
            find_test_case(bundled_program_ptr, name, testset_idx));
  const size_t count =
      test_case->inputs() == nullptr ? 0 : test_case->inputs()->size();
  ET_CHECK_OR_RETURN_ERROR(count == method.inputs_size(),
                           InvalidArgument,
                           "Bundled program: method '%s' takes %zu inputs, "
                           "test case %zu has %zu",
                           name,
                           method.inputs_size(),
                           testset_idx,
                           count);
  for (size_t i = 0; i < count; ++i) {
    const auto* value = test_case->inputs()->Get(i);
    Error set = Error::Ok;
    switch (value->val_type()) {
      case fb::ValueUnion::Tensor: {
        BundledTensor tensor;
        ET_CHECK_OK_OR_RETURN_ERROR(make_tensor(
            value->val_as_Tensor(), name, testset_idx, "input", i, &tensor));
        set = method.set_input(EValue(Tensor(&tensor.impl)), i);
        break;
      }
      case fb::ValueUnion::Int:
        set = method.set_input(EValue(value->val_as_Int()->int_val()), i);
        break;
      case fb::ValueUnion::Bool:
        set = method.set_input(EValue(value->val_as_Bool()->bool_val()), i);
        break;
      case fb::ValueUnion::Double:
        set = method.set_input(EValue(value->val_as_Double()->double_val()), i);
        break;
      default:
        ET_LOG(Error,
               "Bundled program: method '%s' test case %zu input %zu has no "
               "value",
               name,
               testset_idx,
               i);
        return Error::InvalidProgram;
    }
    if (set != Error::Ok) {
      ET_LOG(Error,
             "Bundled program: method '%s' test case %zu: input %zu does not "
             "fit the method",
             name,
             testset_idx,
             i);
      return set;
    }
  }
  return Error::Ok;
}

Error verify_method_outputs(Method& method,
                            SerializedBundledProgram* bundled_program_ptr,
                            size_t testset_idx,
                            double rtol,
                            double atol,
                            OutputMismatch* worst) {
  const char* name = method.method_meta().name();
  ET_UNWRAP(const auto* test_case,
            find_test_case(bundled_program_ptr, name, testset_idx));
  const size_t count = test_case->expected_outputs() == nullptr
                           ? 0
                           : test_case->expected_outputs()->size();
  ET_CHECK_OR_RETURN_ERROR(count == method.outputs_size(),
                           InvalidArgument,
                           "Bundled program: method '%s' has %zu outputs, "
                           "test case %zu expects %zu",
                           name,
                           method.outputs_size(),
                           testset_idx,
                           count);
  OutputMismatch result;
  double worst_diff = -1;
  bool worst_is_mismatch = false;
  for (size_t o = 0; o < count; ++o) {
    const auto* value = test_case->expected_outputs()->Get(o);
    ET_CHECK_OR_RETURN_ERROR(value->val_type() == fb::ValueUnion::Tensor,
                             InvalidProgram,
                             "Bundled program: method '%s' test case %zu: "
                             "expected output %zu is not a tensor",
                             name,
                             testset_idx,
                             o);
    BundledTensor expected;
    ET_CHECK_OK_OR_RETURN_ERROR(make_tensor(value->val_as_Tensor(),
                                            name,
                                            testset_idx,
                                            "expected output",
                                            o,
                                            &expected));
    const EValue& output = method.get_output(o);
    ET_CHECK_OR_RETURN_ERROR(output.isTensor(),
                             InvalidArgument,
                             "Bundled program: method '%s' output %zu is not "
                             "a tensor",
                             name,
                             o);
    const Tensor& actual = output.toTensor();
    const Tensor want(&expected.impl);
    ET_CHECK_OR_RETURN_ERROR(
        actual.scalar_type() == want.scalar_type() &&
            actual.dim() == want.dim(),
        InvalidArgument,
        "Bundled program: method '%s' output %zu has "
        "dtype %s and rank %zd, test case %zu expects "
        "%s and rank %zd",
        name,
        o,
        ::executorch::runtime::toString(actual.scalar_type()),
        actual.dim(),
        testset_idx,
        ::executorch::runtime::toString(want.scalar_type()),
        want.dim());
    for (ssize_t d = 0; d < actual.dim(); ++d) {
      ET_CHECK_OR_RETURN_ERROR(actual.size(d) == want.size(d),
                               InvalidArgument,
                               "Bundled program: method '%s' output %zu has "
                               "size %zd at dim %zd, test case %zu expects "
                               "%zd",
                               name,
                               o,
                               actual.size(d),
                               d,
                               testset_idx,
                               want.size(d));
    }
    for (size_t i = 0; i < static_cast<size_t>(actual.numel()); ++i) {
      double a = 0;
      double e = 0;
      ET_CHECK_OR_RETURN_ERROR(
          element(actual, strided_offset(actual, i), &a) &&
              element(want, strided_offset(want, i), &e),
          NotSupported,
          "Bundled program: cannot compare outputs of dtype %s",
          ::executorch::runtime::toString(actual.scalar_type()));
      const bool both_nan = std::isnan(a) && std::isnan(e);
      const double diff = both_nan ? 0 : std::fabs(a - e);
      const bool ok = both_nan || diff <= atol + rtol * std::fabs(e);
      ++result.num_elements;
      result.num_mismatched += ok ? 0 : 1;
      // A NaN on one side counts as the largest difference.
      const double rank = std::isnan(diff) ? INFINITY : diff;
      const bool better = (!ok && !worst_is_mismatch) ||
                          (ok == !worst_is_mismatch && rank > worst_diff);
      if (better) {
        worst_diff = rank;
        worst_is_mismatch = !ok;
        result.output_index = o;
        result.element_index = i;
        result.expected = e;
        result.actual = a;
      }
    }
  }
  if (worst != nullptr) {
    *worst = result;
  }
  if (result.num_mismatched > 0) {
    ET_LOG(Error,
           "Bundled program: method '%s' test case %zu: %zu of %zu elements "
           "differ (rtol %g, atol %g); worst: output %zu element %zu, "
           "expected %g, got %g",
           name,
           testset_idx,
           result.num_mismatched,
           result.num_elements,
           rtol,
           atol,
           result.output_index,
           result.element_index,
           result.expected,
           result.actual);
    return Error::NotFound;
  }
  return Error::Ok;
}

} // namespace bundled_program
} // namespace executorch
