#include <executorch/runtime/executor/program.h>

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include <executorch/runtime/testing/buffer_data_loader.h>
#include <executorch/runtime/testing/log_capture.h>
#include <executorch/runtime/testing/managed_memory.h>
#include <executorch/runtime/testing/method_harness.h>
#include <executorch/runtime/testing/test_kernels.h>
#include <executorch/runtime/testing/test_programs.h>

using namespace executorch::runtime;
using namespace executorch::runtime::testing;
using executorch::aten::ScalarType;

namespace {

class ProgramTest : public ::testing::Test {
 protected:
  void SetUp() override {
    register_test_kernels();
  }
};

ProgramSpec program_with_constants() {
  ProgramSpec p;
  p.methods = {add_constant_method()};
  p.constants = {float_bytes({1, 2, 3, 4})};
  return p;
}

TEST_F(ProgramTest, CheckHeader) {
  auto bytes = build_program(add_one_program());
  EXPECT_EQ(Program::check_header(bytes.data(), bytes.size()),
            Program::HeaderStatus::CompatibleVersion);
  bytes[6] = '9';
  bytes[7] = '9';
  EXPECT_EQ(Program::check_header(bytes.data(), bytes.size()),
            Program::HeaderStatus::IncompatibleVersion);
  bytes[4] = 'X';
  EXPECT_EQ(Program::check_header(bytes.data(), bytes.size()),
            Program::HeaderStatus::NotPresent);
  EXPECT_EQ(Program::check_header(bytes.data(), 7),
            Program::HeaderStatus::ShortData);
}

TEST_F(ProgramTest, LoadsValidProgram) {
  auto bytes = build_program(add_one_program());
  BufferDataLoader loader(bytes);
  for (auto verification : {Program::Verification::Minimal,
                            Program::Verification::InternalConsistency}) {
    Result<Program> program = Program::load(&loader, verification);
    ASSERT_TRUE(program.ok());
    EXPECT_EQ(program->num_methods(), 1u);
    ASSERT_TRUE(program->get_method_name(0).ok());
    EXPECT_STREQ(*program->get_method_name(0), "forward");
    EXPECT_EQ(program->get_method_name(1).error(), Error::InvalidArgument);
    EXPECT_EQ(program->method_meta("missing").error(), Error::InvalidArgument);
  }
}

TEST_F(ProgramTest, MethodMetaDescribesTheMethod) {
  auto bytes = build_program(add_one_program());
  BufferDataLoader loader(bytes);
  Result<Program> program = Program::load(&loader);
  ASSERT_TRUE(program.ok());
  Result<MethodMeta> meta = program->method_meta("forward");
  ASSERT_TRUE(meta.ok());
  EXPECT_STREQ(meta->name(), "forward");
  EXPECT_EQ(meta->num_inputs(), 1u);
  EXPECT_EQ(meta->num_outputs(), 1u);
  EXPECT_EQ(*meta->input_tag(0), Tag::Tensor);
  EXPECT_EQ(meta->input_tag(1).error(), Error::InvalidArgument);
  Result<TensorInfo> info = meta->input_tensor_meta(0);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->scalar_type(), ScalarType::Float);
  ASSERT_EQ(info->sizes().size(), 2u);
  EXPECT_EQ(info->sizes()[0], 2);
  EXPECT_EQ(info->sizes()[1], 2);
  EXPECT_EQ(info->dim_order()[1], 1);
  EXPECT_EQ(info->nbytes(), 16u);
  EXPECT_TRUE(info->is_memory_planned());
  EXPECT_EQ(info->shape_dynamism(), TensorShapeDynamism::STATIC);
  EXPECT_TRUE(meta->output_tensor_meta(0).ok());
  EXPECT_EQ(meta->num_memory_planned_buffers(), 1u);
  EXPECT_EQ(*meta->memory_planned_buffer_size(0), 32);
  EXPECT_EQ(meta->memory_planned_buffer_size(1).error(),
            Error::InvalidArgument);
  EXPECT_EQ(meta->num_instructions(), 1u);
  EXPECT_EQ(meta->num_backends(), 0u);
  EXPECT_FALSE(meta->uses_backend("Anything"));
}

TEST_F(ProgramTest, MethodMetaRejectsNonTensorMeta) {
  ProgramSpec spec = add_one_program();
  spec.methods[0].values.push_back(ValueSpec::Int(3));
  spec.methods[0].inputs.push_back(2);
  auto bytes = build_program(spec);
  BufferDataLoader loader(bytes);
  Result<Program> program = Program::load(&loader);
  ASSERT_TRUE(program.ok());
  MethodMeta meta = *program->method_meta("forward");
  EXPECT_EQ(*meta.input_tag(1), Tag::Int);
  EXPECT_EQ(meta.input_tensor_meta(1).error(), Error::InvalidArgument);
}

TEST_F(ProgramTest, MethodMetaRefusesHostileSizes) {
  // method_meta reads a method without loading it: its tensor metadata is
  // checked there too.
  struct Case {
    std::vector<int32_t> sizes;
    std::vector<uint8_t> dim_order;
    std::string log;
  };
  const Case cases[] = {
      {{INT32_MAX, INT32_MAX, INT32_MAX},
       {0, 1, 2},
       "input 0: byte size overflows"},
      {{2, -5}, {0, 1}, "input 0 has negative size -5 at dim 1"},
      {{2, 2}, {1, 1}, "input 0: dim_order is not a permutation (entry 1"},
      {{2, 2},
       {0, 7},
       "input 0: dim_order is not a permutation (entry 1 is 7)"},
      {std::vector<int32_t>(10000, 1),
       std::vector<uint8_t>(10000, 0),
       "input 0: rank 10000 exceeds the limit of 16"},
  };
  for (const Case& c : cases) {
    ProgramSpec spec = add_one_program();
    spec.methods[0].values[0].tensor.sizes = c.sizes;
    spec.methods[0].values[0].tensor.dim_order = c.dim_order;
    auto bytes = build_program(spec);
    BufferDataLoader loader(bytes);
    Result<Program> program = Program::load(&loader);
    ASSERT_TRUE(program.ok());
    Result<MethodMeta> meta = program->method_meta("forward");
    ASSERT_TRUE(meta.ok());
    LogCapture logs;
    EXPECT_EQ(meta->input_tensor_meta(0).error(), Error::InvalidProgram);
    EXPECT_TRUE(logs.contains({c.log})) << c.log;
  }
}

TEST_F(ProgramTest, ConstantsFromSegment) {
  auto bytes = build_program(program_with_constants());
  BufferDataLoader loader(bytes);
  Result<Program> program = Program::load(&loader);
  ASSERT_TRUE(program.ok());
  Result<const void*> data = program->get_constant_buffer_data(1, 16);
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(static_cast<const float*>(*data)[3], 4.0f);
  EXPECT_EQ(program->get_constant_buffer_data(1, 17).error(),
            Error::InvalidProgram);
  EXPECT_EQ(program->get_constant_buffer_data(2, 4).error(),
            Error::InvalidProgram);
}

TEST_F(ProgramTest, InlineConstantsWithoutExtendedHeader) {
  ProgramSpec spec = program_with_constants();
  spec.inline_constants = true;
  spec.extended_header = false;
  auto bytes = build_program(spec);
  BufferDataLoader loader(bytes);
  Result<Program> program = Program::load(&loader);
  ASSERT_TRUE(program.ok());
  Result<const void*> data = program->get_constant_buffer_data(1, 16);
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(static_cast<const float*>(*data)[0], 1.0f);
  EXPECT_EQ(program->get_constant_buffer_data(1, 20).error(),
            Error::InvalidProgram);
}

TEST_F(ProgramTest, LoadSegmentAndInlineDelegateData) {
  ProgramSpec spec = add_one_program();
  spec.segments = {{1, 2, 3}};
  spec.inline_delegate_data = {{9, 8}};
  auto bytes = build_program(spec);
  BufferDataLoader loader(bytes);
  Result<Program> program = Program::load(&loader);
  ASSERT_TRUE(program.ok());
  Result<FreeableBuffer> segment = program->LoadSegment(
      DataLoader::SegmentInfo(DataLoader::SegmentInfo::Type::Backend, 0));
  ASSERT_TRUE(segment.ok());
  ASSERT_EQ(segment->size(), 3u);
  EXPECT_EQ(static_cast<const uint8_t*>(segment->data())[2], 3);
  EXPECT_EQ(program
                ->LoadSegment(DataLoader::SegmentInfo(
                    DataLoader::SegmentInfo::Type::Backend, 1))
                .error(),
            Error::InvalidProgram);
  Result<FreeableBuffer> inline_data = program->get_inline_delegate_data(0);
  ASSERT_TRUE(inline_data.ok());
  EXPECT_EQ(inline_data->size(), 2u);
  EXPECT_EQ(program->get_inline_delegate_data(1).error(),
            Error::InvalidProgram);
}

TEST_F(ProgramTest, WrongIdentifierIsRejected) {
  for (const char* id : {"XY12", "ET99"}) {
    ProgramSpec spec = add_one_program();
    spec.file_identifier = id;
    auto bytes = build_program(spec);
    BufferDataLoader loader(bytes);
    EXPECT_EQ(Program::load(&loader).error(), Error::InvalidProgram) << id;
  }
}

TEST_F(ProgramTest, MisalignedProgramDataIsRejected) {
  // Found by fuzz_data_loader under UBSan: the flatbuffer verifier read
  // offsets in place from a misaligned buffer.
  const auto bytes = build_program(add_one_program());
  std::vector<uint64_t> aligned(bytes.size() / 8 + 2);
  auto* shifted = reinterpret_cast<uint8_t*>(aligned.data()) + 1;
  std::memcpy(shifted, bytes.data(), bytes.size());
  BufferDataLoader loader(shifted, bytes.size());
  LogCapture logs;
  EXPECT_EQ(Program::load(&loader).error(), Error::InvalidArgument);
  EXPECT_TRUE(logs.contains({"not aligned to 8 bytes"}));
  std::memcpy(aligned.data(), bytes.data(), bytes.size());
  BufferDataLoader loader_at_start(aligned.data(), bytes.size());
  EXPECT_EQ(Program::load(&loader_at_start).error(), Error::Ok);
}

TEST_F(ProgramTest, NullLoaderIsRejected) {
  EXPECT_EQ(Program::load(nullptr).error(), Error::InvalidArgument);
}

TEST_F(ProgramTest, TruncatedFilesAreRejected) {
  for (bool extended_header : {true, false}) {
    ProgramSpec spec = program_with_constants();
    spec.extended_header = extended_header;
    spec.inline_constants = !extended_header;
    const auto bytes = build_program(spec);
    for (size_t size = 0; size < bytes.size(); ++size) {
      BufferDataLoader loader(bytes.data(), size);
      EXPECT_FALSE(Program::load(&loader).ok())
          << "size " << size << " extended_header " << extended_header;
    }
  }
}

TEST_F(ProgramTest, BadExtendedHeaderIsRejected) {
  const auto good = build_program(add_one_program());
  // Header length below the minimum.
  auto bad_length = good;
  bad_length[12] = 4;
  BufferDataLoader loader1(bad_length);
  EXPECT_EQ(Program::load(&loader1).error(), Error::InvalidProgram);
  // program_size larger than the file.
  auto too_big = good;
  too_big[16 + 3] = 0x7f;
  BufferDataLoader loader2(too_big);
  EXPECT_EQ(Program::load(&loader2).error(), Error::InvalidProgram);
  // program_size smaller than the flatbuffer: verification fails.
  auto too_small = good;
  too_small[16] = 48;
  too_small[17] = 0;
  BufferDataLoader loader3(too_small);
  EXPECT_EQ(Program::load(&loader3).error(), Error::InvalidProgram);
}

TEST_F(ProgramTest, SegmentPastEndOfFileIsRejected) {
  auto bytes = build_program(program_with_constants());
  bytes.resize(bytes.size() - 4);
  BufferDataLoader loader(bytes);
  EXPECT_EQ(Program::load(&loader).error(), Error::InvalidProgram);
}

TEST_F(ProgramTest, ConstantOffsetPastSegmentIsRejected) {
  ProgramSpec spec = program_with_constants();
  spec.constant_offsets = std::vector<uint64_t>{0, 1000};
  auto bytes = build_program(spec);
  BufferDataLoader loader(bytes);
  EXPECT_EQ(Program::load(&loader).error(), Error::InvalidProgram);
}

TEST_F(ProgramTest, EmptyConstantSegmentWithoutExtendedHeader) {
  // What upstream writes for a program without constants: one segment of no
  // bytes, constant offsets [0], no extended header.
  ProgramSpec spec = add_one_program();
  spec.segments = {{}};
  spec.constant_offsets = std::vector<uint64_t>{0};
  spec.extended_header = false;
  auto bytes = build_program(spec);
  BufferDataLoader loader(bytes);
  Result<Program> program = Program::load(&loader);
  ASSERT_TRUE(program.ok());
  EXPECT_EQ(program->get_constant_buffer_data(1, 4).error(),
            Error::InvalidProgram);
}

TEST_F(ProgramTest, SegmentWithDataNeedsExtendedHeader) {
  ProgramSpec spec = add_one_program();
  spec.segments = {{1, 2, 3}};
  spec.extended_header = false;
  auto bytes = build_program(spec);
  BufferDataLoader loader(bytes);
  EXPECT_EQ(Program::load(&loader).error(), Error::InvalidProgram);
}

TEST_F(ProgramTest, ConstantSegmentIndexOutOfRangeIsRejected) {
  // Offsets without any segment to hold them.
  ProgramSpec spec = add_one_program();
  spec.constant_offsets = std::vector<uint64_t>{0};
  auto bytes = build_program(spec);
  BufferDataLoader loader(bytes);
  EXPECT_EQ(Program::load(&loader).error(), Error::InvalidProgram);
}

// Every single-byte corruption of a small program either loads or fails
// with an error; none crashes (run under sanitizers to catch silent UB).
TEST_F(ProgramTest, CorruptedBytesNeverCrash) {
  ProgramSpec spec = program_with_constants();
  // Lists and control flow too, so their parsers see corrupt input.
  MethodSpec& m = spec.methods[0];
  m.values.push_back(ValueSpec::IntList({2}));
  m.values.push_back(ValueSpec::TensorList({0, 1}));
  m.values.push_back(ValueSpec::OptionalTensorList({-1, 3}));
  m.values.push_back(ValueSpec::BoolList({true}));
  m.values.push_back(ValueSpec::Bool(true));
  m.chains[0].push_back(InstructionSpec::JumpFalse(8, 0));
  m.chains[0].push_back(InstructionSpec::Move(2, 2));
  m.chains[0].push_back(InstructionSpec::Free(0));
  const auto good = build_program(spec);
  {
    MethodHarness harness;
    ASSERT_EQ(harness.load(spec, "add_constant"), Error::Ok);
  }
  for (size_t i = 0; i < good.size(); ++i) {
    for (uint8_t flip : {0xffu, 0x01u, 0x80u}) {
      auto bytes = good;
      bytes[i] ^= flip;
      BufferDataLoader loader(bytes);
      Result<Program> program = Program::load(&loader);
      if (!program.ok()) {
        continue;
      }
      for (size_t m = 0; m < program->num_methods(); ++m) {
        Result<const char*> name = program->get_method_name(m);
        if (!name.ok()) {
          continue;
        }
        Result<MethodMeta> meta = program->method_meta(*name);
        if (meta.ok()) {
          for (size_t k = 0; k < meta->num_inputs(); ++k) {
            (void)meta->input_tensor_meta(k);
          }
        }
        ManagedMemory memory({32});
        (void)program->load_method(*name, memory.manager());
      }
    }
  }
}

} // namespace
