#include <executorch/extension/tensor/tensor_ptr_maker.h>

#include <random>

using ::executorch::aten::ScalarType;
using ::executorch::aten::SizesType;
using ::executorch::aten::StridesType;
using ::executorch::aten::TensorShapeDynamism;

namespace executorch {
namespace extension {

namespace {

std::mt19937_64& random_engine() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return engine;
}

// Sets each element of `tensor`, in memory order, to next() converted to
// the tensor's dtype. Stops the program for a dtype it cannot hold numbers.
template <typename Next>
void fill(const TensorPtr& tensor, Next next, const char* name) {
  internal::SwitchContext context;
  ET_SWITCH_REALHBBF16_TYPES(tensor->scalar_type(), context, name, T, [&] {
    T* data = tensor->mutable_data_ptr<T>();
    for (ssize_t i = 0; i < tensor->numel(); ++i) {
      data[i] = internal::convert_element<T>(next());
    }
  });
  ET_CHECK_MSG(!context.failed,
               "%s: dtype %s is not a numeric type",
               name,
               ::executorch::runtime::toString(tensor->scalar_type()));
}

// What the _like factories copy from `other`: sizes, strides, and its
// dtype when `type` is Undefined.
const TensorPtr& checked(const TensorPtr& other) {
  ET_CHECK_MSG(other != nullptr, "null TensorPtr passed to a _like factory");
  return other;
}

std::vector<SizesType> sizes_of(const TensorPtr& other) {
  const auto sizes = checked(other)->sizes();
  return std::vector<SizesType>(sizes.begin(), sizes.end());
}

std::vector<StridesType> strides_of(const TensorPtr& other) {
  const auto strides = checked(other)->strides();
  return std::vector<StridesType>(strides.begin(), strides.end());
}

ScalarType type_or(const TensorPtr& other, ScalarType type) {
  return type == ScalarType::Undefined ? checked(other)->scalar_type() : type;
}

} // namespace

TensorPtr empty_strided(std::vector<SizesType> sizes,
                        std::vector<StridesType> strides,
                        ScalarType type,
                        TensorShapeDynamism dynamism) {
  const size_t element_size = ::executorch::runtime::etensor::elementSize(type);
  ET_CHECK_MSG(element_size != 0,
               "empty: dtype %d has no element size",
               static_cast<int>(type));
  const ssize_t numel = ::executorch::runtime::etensor::compute_numel(
      sizes.data(), static_cast<ssize_t>(sizes.size()));
  ET_CHECK_MSG(numel >= 0, "empty: negative size");
  std::vector<uint8_t> bytes(static_cast<size_t>(numel) * element_size);
  return make_tensor_ptr(std::move(sizes),
                         std::move(bytes),
                         {},
                         std::move(strides),
                         type,
                         dynamism);
}

TensorPtr empty_like(const TensorPtr& other,
                     ScalarType type,
                     TensorShapeDynamism dynamism) {
  return empty_strided(
      sizes_of(other), strides_of(other), type_or(other, type), dynamism);
}

TensorPtr full_strided(std::vector<SizesType> sizes,
                       std::vector<StridesType> strides,
                       ::executorch::aten::Scalar fill_value,
                       ScalarType type,
                       TensorShapeDynamism dynamism) {
  TensorPtr tensor =
      empty_strided(std::move(sizes), std::move(strides), type, dynamism);
  // Integers stay exact: they do not pass through double.
  if (fill_value.isFloatingPoint()) {
    const double value = fill_value.to<double>();
    fill(
        tensor, [value] { return value; }, "full");
  } else if (fill_value.isBoolean()) {
    const bool value = fill_value.to<bool>();
    fill(
        tensor, [value] { return value; }, "full");
  } else {
    const int64_t value = fill_value.to<int64_t>();
    fill(
        tensor, [value] { return value; }, "full");
  }
  return tensor;
}

TensorPtr full_like(const TensorPtr& other,
                    ::executorch::aten::Scalar fill_value,
                    ScalarType type,
                    TensorShapeDynamism dynamism) {
  return full_strided(sizes_of(other),
                      strides_of(other),
                      fill_value,
                      type_or(other, type),
                      dynamism);
}

TensorPtr rand_strided(std::vector<SizesType> sizes,
                       std::vector<StridesType> strides,
                       ScalarType type,
                       TensorShapeDynamism dynamism) {
  TensorPtr tensor =
      empty_strided(std::move(sizes), std::move(strides), type, dynamism);
  std::uniform_real_distribution<double> distribution(0.0, 1.0);
  fill(
      tensor, [&] { return distribution(random_engine()); }, "rand");
  return tensor;
}

TensorPtr rand_like(const TensorPtr& other,
                    ScalarType type,
                    TensorShapeDynamism dynamism) {
  return rand_strided(
      sizes_of(other), strides_of(other), type_or(other, type), dynamism);
}

TensorPtr randn_strided(std::vector<SizesType> sizes,
                        std::vector<StridesType> strides,
                        ScalarType type,
                        TensorShapeDynamism dynamism) {
  TensorPtr tensor =
      empty_strided(std::move(sizes), std::move(strides), type, dynamism);
  std::normal_distribution<double> distribution(0.0, 1.0);
  fill(
      tensor, [&] { return distribution(random_engine()); }, "randn");
  return tensor;
}

TensorPtr randn_like(const TensorPtr& other,
                     ScalarType type,
                     TensorShapeDynamism dynamism) {
  return randn_strided(
      sizes_of(other), strides_of(other), type_or(other, type), dynamism);
}

TensorPtr randint_strided(int64_t low,
                          int64_t high,
                          std::vector<SizesType> sizes,
                          std::vector<StridesType> strides,
                          ScalarType type,
                          TensorShapeDynamism dynamism) {
  ET_CHECK_MSG(low < high,
               "randint: empty range [%lld, %lld)",
               static_cast<long long>(low),
               static_cast<long long>(high));
  TensorPtr tensor =
      empty_strided(std::move(sizes), std::move(strides), type, dynamism);
  std::uniform_int_distribution<int64_t> distribution(low, high - 1);
  fill(
      tensor, [&] { return distribution(random_engine()); }, "randint");
  return tensor;
}

TensorPtr randint_like(const TensorPtr& other,
                       int64_t low,
                       int64_t high,
                       ScalarType type,
                       TensorShapeDynamism dynamism) {
  return randint_strided(low,
                         high,
                         sizes_of(other),
                         strides_of(other),
                         type_or(other, type),
                         dynamism);
}

} // namespace extension
} // namespace executorch
