#pragma once

// MethodMeta: what a method needs and produces, read from the program
// without loading the method (so callers can size buffers and inputs first).

#include <executorch/runtime/core/array_ref.h>
#include <executorch/runtime/core/exec_aten/exec_aten.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/core/tag.h>

// Forward declarations of the flatbuffer types.
namespace executorch_flatbuffer {
struct ExecutionPlan;
struct Tensor;
} // namespace executorch_flatbuffer

namespace executorch {
namespace runtime {

// Shape, dtype and dim order of one input or output tensor.
class TensorInfo final {
 public:
  ArrayRef<int32_t> sizes() const {
    return sizes_;
  }
  ArrayRef<uint8_t> dim_order() const {
    return dim_order_;
  }
  ::executorch::aten::ScalarType scalar_type() const {
    return scalar_type_;
  }
  // Bytes at the declared (upper-bound) sizes.
  size_t nbytes() const {
    return nbytes_;
  }
  bool is_memory_planned() const {
    return is_memory_planned_;
  }
  ::executorch::runtime::TensorShapeDynamism shape_dynamism() const {
    return shape_dynamism_;
  }

  TensorInfo(ArrayRef<int32_t> sizes,
             ArrayRef<uint8_t> dim_order,
             ::executorch::aten::ScalarType scalar_type,
             bool is_memory_planned,
             ::executorch::runtime::TensorShapeDynamism shape_dynamism);

 private:
  ArrayRef<int32_t> sizes_;
  ArrayRef<uint8_t> dim_order_;
  ::executorch::aten::ScalarType scalar_type_;
  bool is_memory_planned_;
  ::executorch::runtime::TensorShapeDynamism shape_dynamism_;
  size_t nbytes_;
};

class MethodMeta final {
 public:
  explicit MethodMeta(const executorch_flatbuffer::ExecutionPlan* plan)
      : plan_(plan) {}

  const char* name() const;

  size_t num_inputs() const;
  Result<Tag> input_tag(size_t index) const;
  Result<TensorInfo> input_tensor_meta(size_t index) const;

  size_t num_outputs() const;
  Result<Tag> output_tag(size_t index) const;
  Result<TensorInfo> output_tensor_meta(size_t index) const;

  // Planned buffers the caller must provide, in HierarchicalAllocator order.
  size_t num_memory_planned_buffers() const;
  Result<int64_t> memory_planned_buffer_size(size_t index) const;

  size_t num_instructions() const;
  size_t num_backends() const;
  Result<const char*> get_backend_name(size_t index) const;
  bool uses_backend(const char* backend_name) const;

 private:
  const executorch_flatbuffer::ExecutionPlan* plan_;
};

} // namespace runtime
} // namespace executorch

namespace torch {
namespace executor {
using ::executorch::runtime::MethodMeta;
using ::executorch::runtime::TensorInfo;
} // namespace executor
} // namespace torch
