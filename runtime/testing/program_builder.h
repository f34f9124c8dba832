#pragma once

// Test helper: describes a program with plain structs and serializes it to
// .pte bytes the way upstream's serializer lays them out (flatbuffer, then
// an optional eh00 extended header spliced in at byte 8, then segments).
// Tests start from a valid spec and change one field to build a malformed
// file. Uses the heap and the standard library; never linked into runtime/.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <executorch/runtime/core/portable_type/scalar_type.h>
#include <executorch/runtime/core/tensor_shape_dynamism.h>

namespace executorch {
namespace runtime {
namespace testing {

struct TensorSpec {
  etensor::ScalarType dtype = etensor::ScalarType::Float;
  std::vector<int32_t> sizes;
  // Empty means contiguous (0, 1, ..., rank - 1).
  std::vector<uint8_t> dim_order;
  // > 0: index into the constant segment (or inline constant buffers).
  uint32_t data_buffer_idx = 0;
  // Planned placement: memory_id (1-based, as in the file) and offset.
  bool planned = false;
  uint32_t memory_id = 1;
  uint64_t offset = 0;
  TensorShapeDynamism dynamism = TensorShapeDynamism::STATIC;
  // Raw scalar type override, for files with an invalid dtype.
  std::optional<int8_t> raw_dtype;
  // Data stored outside the .pte under this fully qualified name.
  std::optional<std::string> external_name;
};

struct ValueSpec {
  enum class Kind {
    None,
    Int,
    Bool,
    Double,
    String,
    Tensor,
    IntList,
    DoubleList,
    BoolList,
    TensorList,
    OptionalTensorList,
  };
  Kind kind = Kind::None;
  int64_t int_value = 0;
  bool bool_value = false;
  double double_value = 0;
  std::string string_value;
  TensorSpec tensor;
  // IntList: value indices of Int values. (Tensor|OptionalTensor)List: value
  // indices of tensors (-1 for None).
  std::vector<int64_t> items;
  std::vector<double> doubles;
  std::vector<bool> bools;

  static ValueSpec None();
  static ValueSpec Int(int64_t v);
  static ValueSpec Bool(bool v);
  static ValueSpec Double(double v);
  static ValueSpec String(std::string v);
  static ValueSpec Tensor(TensorSpec t);
  static ValueSpec IntList(std::vector<int64_t> value_indices);
  static ValueSpec DoubleList(std::vector<double> v);
  static ValueSpec BoolList(std::vector<bool> v);
  static ValueSpec TensorList(std::vector<int64_t> value_indices);
  static ValueSpec OptionalTensorList(std::vector<int64_t> value_indices);
};

// A float tensor of `sizes` in planned buffer 1 at `offset`.
TensorSpec planned_float(std::vector<int32_t> sizes, uint64_t offset);

struct InstructionSpec {
  enum class Kind { Kernel, Delegate, Move, JumpFalse, Free };
  Kind kind = Kind::Kernel;
  // Kernel: op_index. Delegate: delegate_index. Move: move_from.
  // JumpFalse: cond_value_index. Free: value_index.
  int32_t a = 0;
  // Move: move_to. JumpFalse: destination_instruction.
  int32_t b = 0;
  std::vector<int32_t> args;

  static InstructionSpec Kernel(int32_t op_index, std::vector<int32_t> args);
  static InstructionSpec Delegate(int32_t delegate_index,
                                  std::vector<int32_t> args);
  static InstructionSpec Move(int32_t from, int32_t to);
  static InstructionSpec JumpFalse(int32_t cond, int32_t destination);
  static InstructionSpec Free(int32_t value_index);
};

struct OperatorSpec {
  std::string name;
  std::string overload;
};

struct DelegateSpec {
  std::string id;
  // INLINE: index into ProgramSpec::inline_delegate_data; SEGMENT: index
  // into the program's segments.
  bool inline_data = true;
  uint32_t index = 0;
  std::vector<std::pair<std::string, std::vector<uint8_t>>> compile_specs;
};

struct MethodSpec {
  std::string name = "forward";
  std::vector<ValueSpec> values;
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  std::vector<std::vector<InstructionSpec>> chains{{}};
  std::vector<OperatorSpec> operators;
  std::vector<DelegateSpec> delegates;
  // Entry 0 is the reserved placeholder, as upstream emits it.
  std::vector<int64_t> non_const_buffer_sizes{0};
};

struct ProgramSpec {
  std::vector<MethodSpec> methods;
  // Constant tensors' bytes; constant k is data_buffer_idx k + 1 (index 0
  // is reserved, as upstream emits it).
  std::vector<std::vector<uint8_t>> constants;
  // Store constants inline in Program.constant_buffer (older files) rather
  // than in a constant segment.
  bool inline_constants = false;
  // Initial states of mutable (planned) tensors, stored in one mutable data
  // segment; entry k is data_buffer_idx k + 1 of a planned tensor.
  std::vector<std::vector<uint8_t>> mutable_data;
  std::vector<std::vector<uint8_t>> inline_delegate_data;
  // Extra segments (after the constant segment, if any), e.g. delegate
  // blobs. Segment indices: the constant segment (if any), the mutable data
  // segment (if any), then these.
  std::vector<std::vector<uint8_t>> segments;
  bool extended_header = true;
  std::string file_identifier = "ET12";
  // Overrides the computed constant_segment offsets.
  std::optional<std::vector<uint64_t>> constant_offsets;
  // Overrides the (offset, size) written for segment k.
  std::map<size_t, std::pair<uint64_t, uint64_t>> segment_overrides;
};

// Index of the first entry of ProgramSpec::segments in the serialized
// program's segment table.
size_t first_extra_segment_index(const ProgramSpec& spec);

std::vector<uint8_t> build_program(const ProgramSpec& spec);

} // namespace testing
} // namespace runtime
} // namespace executorch
