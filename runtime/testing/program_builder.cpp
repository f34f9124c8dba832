#include <executorch/runtime/testing/program_builder.h>

#include <cstring>

#include <flatbuffers/flatbuffers.h>

#include <executorch/schema/program_generated.h>

namespace executorch {
namespace runtime {
namespace testing {

namespace fb = executorch_flatbuffer;

namespace {

constexpr size_t kExtendedHeaderSize = 32;
constexpr size_t kSegmentAlignment = 16;

size_t align_up(size_t value, size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

void write_le(uint8_t* out, uint64_t value, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    out[i] = static_cast<uint8_t>(value >> (8 * i));
  }
}

flatbuffers::Offset<fb::Tensor> build_tensor(flatbuffers::FlatBufferBuilder& b,
                                             const TensorSpec& t) {
  std::vector<uint8_t> dim_order = t.dim_order;
  if (dim_order.empty()) {
    for (size_t d = 0; d < t.sizes.size(); ++d) {
      dim_order.push_back(static_cast<uint8_t>(d));
    }
  }
  auto sizes = b.CreateVector(t.sizes);
  auto order = b.CreateVector(dim_order);
  flatbuffers::Offset<fb::AllocationDetails> allocation;
  if (t.planned) {
    allocation = fb::CreateAllocationDetails(
        b,
        t.memory_id,
        static_cast<uint32_t>(t.offset & 0xffffffffu),
        static_cast<uint32_t>(t.offset >> 32));
  }
  const int8_t dtype =
      t.raw_dtype ? *t.raw_dtype : static_cast<int8_t>(t.dtype);
  flatbuffers::Offset<fb::ExtraTensorInfo> extra;
  if (t.external_name) {
    extra = fb::CreateExtraTensorInfo(b,
                                      /*mutable_data_segments_idx=*/0,
                                      b.CreateString(*t.external_name),
                                      fb::TensorDataLocation::EXTERNAL);
  }
  return fb::CreateTensor(b,
                          static_cast<fb::ScalarType>(dtype),
                          /*storage_offset=*/0,
                          sizes,
                          order,
                          /*requires_grad=*/false,
                          t.data_buffer_idx,
                          allocation,
                          /*layout=*/0,
                          static_cast<fb::TensorShapeDynamism>(t.dynamism),
                          extra);
}

std::vector<int32_t> to_int32(const std::vector<int64_t>& items) {
  return std::vector<int32_t>(items.begin(), items.end());
}

flatbuffers::Offset<fb::EValue> build_value(flatbuffers::FlatBufferBuilder& b,
                                            const ValueSpec& v) {
  using Kind = ValueSpec::Kind;
  switch (v.kind) {
    case Kind::None:
      return fb::CreateEValue(
          b, fb::KernelTypes::Null, fb::CreateNull(b).Union());
    case Kind::Int:
      return fb::CreateEValue(
          b, fb::KernelTypes::Int, fb::CreateInt(b, v.int_value).Union());
    case Kind::Bool:
      return fb::CreateEValue(
          b, fb::KernelTypes::Bool, fb::CreateBool(b, v.bool_value).Union());
    case Kind::Double:
      return fb::CreateEValue(b,
                              fb::KernelTypes::Double,
                              fb::CreateDouble(b, v.double_value).Union());
    case Kind::String:
      return fb::CreateEValue(
          b,
          fb::KernelTypes::String,
          fb::CreateString(b, b.CreateString(v.string_value)).Union());
    case Kind::Tensor:
      return fb::CreateEValue(
          b, fb::KernelTypes::Tensor, build_tensor(b, v.tensor).Union());
    case Kind::IntList:
      return fb::CreateEValue(
          b,
          fb::KernelTypes::IntList,
          fb::CreateIntList(b, b.CreateVector(v.items)).Union());
    case Kind::DoubleList:
      return fb::CreateEValue(
          b,
          fb::KernelTypes::DoubleList,
          fb::CreateDoubleList(b, b.CreateVector(v.doubles)).Union());
    case Kind::BoolList: {
      std::vector<uint8_t> bytes(v.bools.begin(), v.bools.end());
      auto items = b.CreateVector(bytes);
      return fb::CreateEValue(
          b, fb::KernelTypes::BoolList, fb::CreateBoolList(b, items).Union());
    }
    case Kind::TensorList:
      return fb::CreateEValue(
          b,
          fb::KernelTypes::TensorList,
          fb::CreateTensorList(b, b.CreateVector(to_int32(v.items))).Union());
    case Kind::OptionalTensorList:
      return fb::CreateEValue(
          b,
          fb::KernelTypes::OptionalTensorList,
          fb::CreateOptionalTensorList(b, b.CreateVector(to_int32(v.items)))
              .Union());
  }
  return 0;
}

flatbuffers::Offset<fb::Instruction> build_instruction(
    flatbuffers::FlatBufferBuilder& b, const InstructionSpec& in) {
  using Kind = InstructionSpec::Kind;
  switch (in.kind) {
    case Kind::Kernel:
      return fb::CreateInstruction(
          b,
          fb::InstructionArguments::KernelCall,
          fb::CreateKernelCall(b, in.a, b.CreateVector(in.args)).Union());
    case Kind::Delegate:
      return fb::CreateInstruction(
          b,
          fb::InstructionArguments::DelegateCall,
          fb::CreateDelegateCall(b, in.a, b.CreateVector(in.args)).Union());
    case Kind::Move:
      return fb::CreateInstruction(b,
                                   fb::InstructionArguments::MoveCall,
                                   fb::CreateMoveCall(b, in.a, in.b).Union());
    case Kind::JumpFalse:
      return fb::CreateInstruction(
          b,
          fb::InstructionArguments::JumpFalseCall,
          fb::CreateJumpFalseCall(b, in.a, in.b).Union());
    case Kind::Free:
      return fb::CreateInstruction(b,
                                   fb::InstructionArguments::FreeCall,
                                   fb::CreateFreeCall(b, in.a).Union());
  }
  return 0;
}

flatbuffers::Offset<fb::ExecutionPlan> build_plan(
    flatbuffers::FlatBufferBuilder& b, const MethodSpec& m) {
  std::vector<flatbuffers::Offset<fb::EValue>> values;
  for (const ValueSpec& v : m.values) {
    values.push_back(build_value(b, v));
  }
  std::vector<flatbuffers::Offset<fb::Chain>> chains;
  for (const auto& chain : m.chains) {
    std::vector<flatbuffers::Offset<fb::Instruction>> instructions;
    for (const InstructionSpec& in : chain) {
      instructions.push_back(build_instruction(b, in));
    }
    chains.push_back(fb::CreateChain(b,
                                     b.CreateVector(m.inputs),
                                     b.CreateVector(m.outputs),
                                     b.CreateVector(instructions)));
  }
  std::vector<flatbuffers::Offset<fb::Operator>> operators;
  for (const OperatorSpec& op : m.operators) {
    operators.push_back(fb::CreateOperator(
        b, b.CreateString(op.name), b.CreateString(op.overload)));
  }
  std::vector<flatbuffers::Offset<fb::BackendDelegate>> delegates;
  for (const DelegateSpec& d : m.delegates) {
    std::vector<flatbuffers::Offset<fb::CompileSpec>> specs;
    for (const auto& spec : d.compile_specs) {
      specs.push_back(fb::CreateCompileSpec(
          b, b.CreateString(spec.first), b.CreateVector(spec.second)));
    }
    auto processed = fb::CreateBackendDelegateDataReference(
        b,
        d.inline_data ? fb::DataLocation::INLINE : fb::DataLocation::SEGMENT,
        d.index);
    delegates.push_back(fb::CreateBackendDelegate(
        b, b.CreateString(d.id), processed, b.CreateVector(specs)));
  }
  return fb::CreateExecutionPlan(b,
                                 b.CreateString(m.name),
                                 /*container_meta_type=*/0,
                                 b.CreateVector(values),
                                 b.CreateVector(m.inputs),
                                 b.CreateVector(m.outputs),
                                 b.CreateVector(chains),
                                 b.CreateVector(operators),
                                 b.CreateVector(delegates),
                                 b.CreateVector(m.non_const_buffer_sizes));
}

bool has_constant_segment(const ProgramSpec& spec) {
  return !spec.constants.empty() && !spec.inline_constants;
}

// Packs `buffers` into one segment after an empty placeholder (index 0 is
// reserved), returning the segment and each buffer's offset.
std::vector<uint8_t> pack_subsegments(
    const std::vector<std::vector<uint8_t>>& buffers,
    std::vector<uint64_t>* offsets) {
  std::vector<uint8_t> packed;
  offsets->assign(1, 0);
  for (const auto& buffer : buffers) {
    packed.resize(align_up(packed.size(), kSegmentAlignment));
    offsets->push_back(packed.size());
    packed.insert(packed.end(), buffer.begin(), buffer.end());
  }
  return packed;
}

} // namespace

ValueSpec ValueSpec::None() {
  return ValueSpec();
}
ValueSpec ValueSpec::Int(int64_t v) {
  ValueSpec s;
  s.kind = Kind::Int;
  s.int_value = v;
  return s;
}
ValueSpec ValueSpec::Bool(bool v) {
  ValueSpec s;
  s.kind = Kind::Bool;
  s.bool_value = v;
  return s;
}
ValueSpec ValueSpec::Double(double v) {
  ValueSpec s;
  s.kind = Kind::Double;
  s.double_value = v;
  return s;
}
ValueSpec ValueSpec::String(std::string v) {
  ValueSpec s;
  s.kind = Kind::String;
  s.string_value = std::move(v);
  return s;
}
ValueSpec ValueSpec::Tensor(TensorSpec t) {
  ValueSpec s;
  s.kind = Kind::Tensor;
  s.tensor = std::move(t);
  return s;
}
ValueSpec ValueSpec::IntList(std::vector<int64_t> value_indices) {
  ValueSpec s;
  s.kind = Kind::IntList;
  s.items = std::move(value_indices);
  return s;
}
ValueSpec ValueSpec::DoubleList(std::vector<double> v) {
  ValueSpec s;
  s.kind = Kind::DoubleList;
  s.doubles = std::move(v);
  return s;
}
ValueSpec ValueSpec::BoolList(std::vector<bool> v) {
  ValueSpec s;
  s.kind = Kind::BoolList;
  s.bools = std::move(v);
  return s;
}
ValueSpec ValueSpec::TensorList(std::vector<int64_t> value_indices) {
  ValueSpec s;
  s.kind = Kind::TensorList;
  s.items = std::move(value_indices);
  return s;
}
ValueSpec ValueSpec::OptionalTensorList(std::vector<int64_t> value_indices) {
  ValueSpec s;
  s.kind = Kind::OptionalTensorList;
  s.items = std::move(value_indices);
  return s;
}

TensorSpec planned_float(std::vector<int32_t> sizes, uint64_t offset) {
  TensorSpec t;
  t.sizes = std::move(sizes);
  t.planned = true;
  t.offset = offset;
  return t;
}

InstructionSpec InstructionSpec::Kernel(int32_t op_index,
                                        std::vector<int32_t> args) {
  return InstructionSpec{Kind::Kernel, op_index, 0, std::move(args)};
}
InstructionSpec InstructionSpec::Delegate(int32_t delegate_index,
                                          std::vector<int32_t> args) {
  return InstructionSpec{Kind::Delegate, delegate_index, 0, std::move(args)};
}
InstructionSpec InstructionSpec::Move(int32_t from, int32_t to) {
  return InstructionSpec{Kind::Move, from, to, {}};
}
InstructionSpec InstructionSpec::JumpFalse(int32_t cond, int32_t destination) {
  return InstructionSpec{Kind::JumpFalse, cond, destination, {}};
}
InstructionSpec InstructionSpec::Free(int32_t value_index) {
  return InstructionSpec{Kind::Free, value_index, 0, {}};
}

size_t first_extra_segment_index(const ProgramSpec& spec) {
  return (has_constant_segment(spec) ? 1 : 0) +
         (spec.mutable_data.empty() ? 0 : 1);
}

std::vector<uint8_t> build_program(const ProgramSpec& spec) {
  // Lay out the segment data first: segment offsets go in the flatbuffer.
  std::vector<std::vector<uint8_t>> segment_data;
  std::vector<uint64_t> constant_offsets{0};
  if (has_constant_segment(spec)) {
    segment_data.push_back(pack_subsegments(spec.constants, &constant_offsets));
  }
  if (spec.constant_offsets) {
    constant_offsets = *spec.constant_offsets;
  }
  std::vector<uint64_t> mutable_offsets;
  const uint32_t mutable_segment_index =
      static_cast<uint32_t>(segment_data.size());
  if (!spec.mutable_data.empty()) {
    segment_data.push_back(
        pack_subsegments(spec.mutable_data, &mutable_offsets));
  }
  segment_data.insert(
      segment_data.end(), spec.segments.begin(), spec.segments.end());
  std::vector<size_t> segment_offsets;
  size_t segment_bytes = 0;
  for (const auto& data : segment_data) {
    segment_bytes = align_up(segment_bytes, kSegmentAlignment);
    segment_offsets.push_back(segment_bytes);
    segment_bytes += data.size();
  }

  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::ExecutionPlan>> plans;
  for (const MethodSpec& m : spec.methods) {
    plans.push_back(build_plan(b, m));
  }
  std::vector<flatbuffers::Offset<fb::Buffer>> constant_buffers;
  if (spec.inline_constants) {
    constant_buffers.push_back(
        fb::CreateBuffer(b, b.CreateVector<uint8_t>({})));
    for (const auto& c : spec.constants) {
      b.ForceVectorAlignment(c.size(), sizeof(uint8_t), 16);
      constant_buffers.push_back(fb::CreateBuffer(b, b.CreateVector(c)));
    }
  }
  std::vector<flatbuffers::Offset<fb::BackendDelegateInlineData>> inline_data;
  for (const auto& d : spec.inline_delegate_data) {
    b.ForceVectorAlignment(d.size(), sizeof(uint8_t), 16);
    inline_data.push_back(
        fb::CreateBackendDelegateInlineData(b, b.CreateVector(d)));
  }
  std::vector<flatbuffers::Offset<fb::DataSegment>> segments;
  for (size_t i = 0; i < segment_data.size(); ++i) {
    const auto forced = spec.segment_overrides.find(i);
    segments.push_back(forced == spec.segment_overrides.end()
                           ? fb::CreateDataSegment(
                                 b, segment_offsets[i], segment_data[i].size())
                           : fb::CreateDataSegment(b,
                                                   forced->second.first,
                                                   forced->second.second));
  }
  flatbuffers::Offset<fb::SubsegmentOffsets> constant_segment;
  if (has_constant_segment(spec) || spec.constant_offsets) {
    constant_segment =
        fb::CreateSubsegmentOffsets(b, 0, b.CreateVector(constant_offsets));
  }
  std::vector<flatbuffers::Offset<fb::SubsegmentOffsets>> mutable_segments;
  if (!spec.mutable_data.empty()) {
    mutable_segments.push_back(fb::CreateSubsegmentOffsets(
        b, mutable_segment_index, b.CreateVector(mutable_offsets)));
  }
  auto program = fb::CreateProgram(b,
                                   /*version=*/0,
                                   b.CreateVector(plans),
                                   b.CreateVector(constant_buffers),
                                   b.CreateVector(inline_data),
                                   b.CreateVector(segments),
                                   constant_segment,
                                   b.CreateVector(mutable_segments));
  b.Finish(program, spec.file_identifier.c_str());

  std::vector<uint8_t> file(b.GetBufferPointer(),
                            b.GetBufferPointer() + b.GetSize());
  if (!spec.extended_header) {
    return file;
  }
  // Splice the header in after the root offset and identifier. All other
  // flatbuffer offsets are relative, so only the root offset moves.
  std::vector<uint8_t> header(kExtendedHeaderSize);
  std::memcpy(header.data(), "eh00", 4);
  const size_t program_size = file.size() + kExtendedHeaderSize;
  const size_t segment_base =
      segment_data.empty() ? 0 : align_up(program_size, kSegmentAlignment);
  write_le(header.data() + 4, kExtendedHeaderSize, 4);
  write_le(header.data() + 8, program_size, 8);
  write_le(header.data() + 16, segment_base, 8);
  write_le(header.data() + 24, segment_bytes, 8);
  file.insert(file.begin() + 8, header.begin(), header.end());
  uint32_t root = 0;
  std::memcpy(&root, file.data(), 4);
  root += kExtendedHeaderSize;
  std::memcpy(file.data(), &root, 4);
  for (size_t i = 0; i < segment_data.size(); ++i) {
    file.resize(segment_base + segment_offsets[i]);
    file.insert(file.end(), segment_data[i].begin(), segment_data[i].end());
  }
  return file;
}

} // namespace testing
} // namespace runtime
} // namespace executorch
