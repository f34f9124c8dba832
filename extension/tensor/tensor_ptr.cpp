#include <executorch/extension/tensor/tensor_ptr.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include <executorch/runtime/core/exec_aten/util/dim_order_util.h>

using ::executorch::aten::DimOrderType;
using ::executorch::aten::ScalarType;
using ::executorch::aten::SizesType;
using ::executorch::aten::StridesType;
using ::executorch::aten::Tensor;
using ::executorch::aten::TensorImpl;
using ::executorch::aten::TensorShapeDynamism;
using ::executorch::runtime::Error;

namespace executorch {
namespace extension {

namespace {

// Everything a TensorPtr owns. The TensorImpl points into the vectors, so
// the storage never moves once made (it lives behind a shared_ptr).
struct TensorStorage {
  TensorStorage(std::vector<SizesType> sizes_in,
                std::vector<DimOrderType> dim_order_in,
                std::vector<StridesType> strides_in,
                ScalarType type,
                void* data,
                TensorShapeDynamism dynamism,
                std::function<void(void*)> deleter_in)
      : sizes(std::move(sizes_in)),
        dim_order(std::move(dim_order_in)),
        strides(std::move(strides_in)),
        impl(type,
             static_cast<ssize_t>(sizes.size()),
             sizes.data(),
             data,
             dim_order.data(),
             strides.data(),
             dynamism),
        tensor(&impl),
        deleter(std::move(deleter_in)) {}
  TensorStorage(const TensorStorage&) = delete;
  TensorStorage& operator=(const TensorStorage&) = delete;
  ~TensorStorage() {
    if (deleter) {
      deleter(impl.mutable_data());
    }
  }

  std::vector<SizesType> sizes;
  std::vector<DimOrderType> dim_order;
  std::vector<StridesType> strides;
  TensorImpl impl;
  Tensor tensor;
  std::function<void(void*)> deleter;
};

// The dim order of dense `strides`: dimensions from the largest stride to
// the smallest, ties (size-1 dimensions) in index order.
std::vector<DimOrderType> dim_order_from_strides(
    const std::vector<StridesType>& strides) {
  std::vector<DimOrderType> order(strides.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(
      order.begin(), order.end(), [&](DimOrderType a, DimOrderType b) {
        return strides[a] > strides[b];
      });
  return order;
}

// Fills in an empty dim order or empty strides, and checks that they agree
// with each other and with the rank. Stops the program on a mismatch.
void complete_layout(const std::vector<SizesType>& sizes,
                     std::vector<DimOrderType>& dim_order,
                     std::vector<StridesType>& strides) {
  const size_t rank = sizes.size();
  for (size_t i = 0; i < rank; ++i) {
    ET_CHECK_MSG(sizes[i] >= 0,
                 "make_tensor_ptr: size %d at dim %zu is negative",
                 static_cast<int>(sizes[i]),
                 i);
  }
  ET_CHECK_MSG(dim_order.empty() || dim_order.size() == rank,
               "make_tensor_ptr: dim_order has %zu entries for rank %zu",
               dim_order.size(),
               rank);
  ET_CHECK_MSG(strides.empty() || strides.size() == rank,
               "make_tensor_ptr: strides has %zu entries for rank %zu",
               strides.size(),
               rank);
  if (dim_order.empty() && !strides.empty()) {
    dim_order = dim_order_from_strides(strides);
  } else if (dim_order.empty()) {
    dim_order.resize(rank);
    std::iota(dim_order.begin(), dim_order.end(), 0);
  }
  std::vector<StridesType> dense(rank);
  ET_CHECK_MSG(
      ::executorch::runtime::dim_order_to_stride(
          sizes.data(), dim_order.data(), rank, dense.data()) == Error::Ok,
      "make_tensor_ptr: dim_order is not a permutation of 0..%zu",
      rank == 0 ? size_t(0) : rank - 1);
  if (strides.empty()) {
    strides = std::move(dense);
    return;
  }
  for (size_t i = 0; i < rank; ++i) {
    // The stride of a dimension of size 1 is never used to step.
    ET_CHECK_MSG(strides[i] == dense[i] || sizes[i] <= 1,
                 "make_tensor_ptr: stride %d at dim %zu is not that of a "
                 "dense tensor in its dim order (expected %d)",
                 static_cast<int>(strides[i]),
                 i,
                 static_cast<int>(dense[i]));
  }
  strides = std::move(dense);
}

} // namespace

TensorPtr make_tensor_ptr(std::vector<SizesType> sizes,
                          void* data,
                          std::vector<DimOrderType> dim_order,
                          std::vector<StridesType> strides,
                          ScalarType type,
                          TensorShapeDynamism dynamism,
                          std::function<void(void*)> deleter) {
  ET_CHECK_MSG(::executorch::runtime::etensor::elementSize(type) != 0,
               "make_tensor_ptr: dtype %d has no element size",
               static_cast<int>(type));
  complete_layout(sizes, dim_order, strides);
  auto storage = std::make_shared<TensorStorage>(std::move(sizes),
                                                 std::move(dim_order),
                                                 std::move(strides),
                                                 type,
                                                 data,
                                                 dynamism,
                                                 std::move(deleter));
  // Aliasing constructor: the pointer is the Tensor, the owner the storage.
  return TensorPtr(storage, &storage->tensor);
}

TensorPtr make_tensor_ptr(std::vector<SizesType> sizes,
                          std::vector<uint8_t> data,
                          std::vector<DimOrderType> dim_order,
                          std::vector<StridesType> strides,
                          ScalarType type,
                          TensorShapeDynamism dynamism) {
  return internal::make_owning_tensor_ptr(std::move(sizes),
                                          std::move(data),
                                          std::move(dim_order),
                                          std::move(strides),
                                          type,
                                          dynamism);
}

TensorPtr make_tensor_ptr(const TensorPtr& tensor,
                          std::vector<SizesType> sizes,
                          std::vector<DimOrderType> dim_order,
                          std::vector<StridesType> strides) {
  ET_CHECK_MSG(tensor != nullptr, "make_tensor_ptr: null TensorPtr to view");
  if (sizes.empty()) {
    sizes.assign(tensor->sizes().begin(), tensor->sizes().end());
    if (dim_order.empty() && strides.empty()) {
      dim_order.assign(tensor->dim_order().begin(), tensor->dim_order().end());
    }
  }
  TensorPtr view = make_tensor_ptr(std::move(sizes),
                                   tensor->mutable_data_ptr(),
                                   std::move(dim_order),
                                   std::move(strides),
                                   tensor->scalar_type(),
                                   tensor->shape_dynamism(),
                                   [keep_alive = tensor](void*) {});
  ET_CHECK_MSG(view->nbytes() <= tensor->nbytes(),
               "make_tensor_ptr: a view of %zu bytes over a tensor of %zu",
               view->nbytes(),
               tensor->nbytes());
  return view;
}

TensorPtr clone_tensor_ptr(const Tensor& tensor) {
  std::vector<uint8_t> bytes(tensor.nbytes());
  if (!bytes.empty()) {
    ET_CHECK_MSG(tensor.const_data_ptr() != nullptr,
                 "clone_tensor_ptr: the tensor has no data");
    std::memcpy(bytes.data(), tensor.const_data_ptr(), bytes.size());
  }
  return make_tensor_ptr(
      std::vector<SizesType>(tensor.sizes().begin(), tensor.sizes().end()),
      std::move(bytes),
      std::vector<DimOrderType>(tensor.dim_order().begin(),
                                tensor.dim_order().end()),
      {},
      tensor.scalar_type(),
      tensor.shape_dynamism());
}

Error resize_tensor_ptr(TensorPtr& tensor,
                        const std::vector<SizesType>& sizes) {
  ET_CHECK_OR_RETURN_ERROR(
      tensor != nullptr, InvalidArgument, "resize_tensor_ptr: null TensorPtr");
  TensorImpl* impl = tensor->unsafeGetTensorImpl();
  if (static_cast<ssize_t>(sizes.size()) == impl->dim()) {
    const ssize_t numel = ::executorch::runtime::etensor::compute_numel(
        sizes.data(), impl->dim());
    // The data does not grow, even for an unbounded tensor.
    ET_CHECK_OR_RETURN_ERROR(numel <= impl->capacity_numel(),
                             NotSupported,
                             "resize_tensor_ptr: %zd elements do not fit in "
                             "the tensor's %zd",
                             numel,
                             impl->capacity_numel());
  }
  return impl->internal_resize_contiguous(
      ::executorch::runtime::ArrayRef<SizesType>(sizes.data(), sizes.size()));
}

namespace internal {

template <typename T>
std::vector<uint8_t> convert_elements(const std::vector<T>& values,
                                      ScalarType type) {
  std::vector<uint8_t> bytes(values.size() *
                             ::executorch::runtime::etensor::elementSize(type));
  internal::SwitchContext context;
  ET_SWITCH_REALHBBF16_TYPES(type, context, "make_tensor_ptr", OUT, [&] {
    OUT* out = reinterpret_cast<OUT*>(bytes.data());
    for (size_t i = 0; i < values.size(); ++i) {
      out[i] = convert_element<OUT>(values[i]);
    }
  });
  ET_CHECK_MSG(!context.failed,
               "make_tensor_ptr: cannot convert elements to dtype %s",
               ::executorch::runtime::toString(type));
  return bytes;
}

#define ET_INSTANTIATE_CONVERT(ctype, name)              \
  template std::vector<uint8_t> convert_elements<ctype>( \
      const std::vector<ctype>&, ScalarType);
ET_FORALL_SCALAR_TYPES(ET_INSTANTIATE_CONVERT)
#undef ET_INSTANTIATE_CONVERT

} // namespace internal

} // namespace extension
} // namespace executorch
