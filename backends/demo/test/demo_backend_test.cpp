// DemoBackend: blobs built here byte by byte (the layout of
// exir/backend/test/backend_with_compiler_demo.py) run sin, add and mm
// like a reference loop; malformed blobs and calls are refused with an
// error and a log line saying what is wrong and where.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <executorch/backends/demo/runtime/demo_backend.h>
#include <executorch/runtime/testing/log_capture.h>
#include <executorch/runtime/testing/owned_tensor.h>

namespace {

using executorch::aten::ScalarType;
using executorch::backends::demo::DemoBackend;
using executorch::runtime::ArrayRef;
using executorch::runtime::BackendExecutionContext;
using executorch::runtime::BackendInitContext;
using executorch::runtime::CompileSpec;
using executorch::runtime::DelegateHandle;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::FreeableBuffer;
using executorch::runtime::MemoryAllocator;
using executorch::runtime::Result;
using executorch::runtime::Span;
using executorch::runtime::testing::LogCapture;
using executorch::runtime::testing::OwnedTensor;

// Writes a blob field by field.
struct Blob {
  std::vector<uint8_t> bytes{'D', 'M', '0', '1'};

  template <typename T>
  Blob& put(T value) {
    const auto* p = reinterpret_cast<const uint8_t*>(&value);
    bytes.insert(bytes.end(), p, p + sizeof(T));
    return *this;
  }
  Blob& header(uint32_t values, uint32_t inputs, uint32_t outputs,
               uint32_t instructions) {
    return put(values).put(inputs).put(outputs).put(instructions);
  }
  Blob& value(std::vector<int64_t> sizes,
              const std::vector<float>* data = nullptr) {
    put(static_cast<uint32_t>(sizes.size()));
    for (int64_t s : sizes) {
      put(s);
    }
    put(static_cast<uint32_t>(data != nullptr));
    if (data != nullptr) {
      for (float f : *data) {
        put(f);
      }
    }
    return *this;
  }
  Blob& instruction(uint32_t opcode, uint32_t out, std::vector<uint32_t> args) {
    put(opcode).put(out).put(static_cast<uint32_t>(args.size()));
    for (uint32_t a : args) {
      put(a);
    }
    return put(int32_t{-1});
  }
};

class Delegate {
 public:
  Delegate() : pool_(1 << 16), allocator_(pool_.size(), pool_.data()) {}

  Error init(const Blob& blob) {
    blob_ = blob.bytes;
    FreeableBuffer buffer(blob_.data(), blob_.size(), nullptr);
    BackendInitContext context(&allocator_);
    Result<DelegateHandle*> handle =
        backend_.init(context, &buffer, ArrayRef<CompileSpec>());
    if (!handle.ok()) {
      return handle.error();
    }
    handle_ = *handle;
    return Error::Ok;
  }

  // Runs on `tensors` (inputs then outputs).
  Error run(std::vector<OwnedTensor*> tensors) {
    std::vector<EValue> values;
    for (OwnedTensor* t : tensors) {
      values.emplace_back(t->tensor());
    }
    std::vector<EValue*> args;
    for (EValue& v : values) {
      args.push_back(&v);
    }
    BackendExecutionContext context;
    return backend_.execute(context, handle_,
                            Span<EValue*>(args.data(), args.size()));
  }

 private:
  DemoBackend backend_;
  std::vector<uint8_t> pool_;
  MemoryAllocator allocator_;
  std::vector<uint8_t> blob_;
  DelegateHandle* handle_ = nullptr;
};

const float* data(OwnedTensor& t) {
  return t.tensor().const_data_ptr<float>();
}

TEST(DemoBackendTest, SinThenAddWithAConstantBroadcast) {
  // out = sin(x) + bias, x: [2, 3], bias: [3] (a constant).
  const std::vector<float> bias = {1.0f, -2.0f, 0.5f};
  Blob blob;
  blob.header(4, 1, 1, 2)
      .value({2, 3})
      .value({3}, &bias)
      .value({2, 3})
      .value({2, 3})
      .put(uint32_t{0})
      .put(uint32_t{3})
      .instruction(0, 2, {0})
      .instruction(1, 3, {2, 1});
  Delegate delegate;
  ASSERT_EQ(delegate.init(blob), Error::Ok);
  const std::vector<float> x = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, -1.0f};
  OwnedTensor in(ScalarType::Float, {2, 3}, x);
  OwnedTensor out(ScalarType::Float, {2, 3}, std::vector<float>(6));
  ASSERT_EQ(delegate.run({&in, &out}), Error::Ok);
  for (int i = 0; i < 6; ++i) {
    EXPECT_FLOAT_EQ(data(out)[i], std::sin(x[i]) + bias[i % 3]) << i;
  }
}

TEST(DemoBackendTest, MatrixProduct) {
  Blob blob;
  blob.header(3, 2, 1, 1)
      .value({2, 3})
      .value({3, 2})
      .value({2, 2})
      .put(uint32_t{0})
      .put(uint32_t{1})
      .put(uint32_t{2})
      .instruction(2, 2, {0, 1});
  Delegate delegate;
  ASSERT_EQ(delegate.init(blob), Error::Ok);
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  const std::vector<float> b = {7, 8, 9, 10, 11, 12};
  OwnedTensor ta(ScalarType::Float, {2, 3}, a);
  OwnedTensor tb(ScalarType::Float, {3, 2}, b);
  OwnedTensor out(ScalarType::Float, {2, 2}, std::vector<float>(4));
  ASSERT_EQ(delegate.run({&ta, &tb, &out}), Error::Ok);
  const float expected[4] = {58, 64, 139, 154};
  for (int i = 0; i < 4; ++i) {
    EXPECT_FLOAT_EQ(data(out)[i], expected[i]);
  }
}

TEST(DemoBackendTest, OutputThatIsAnInputIsCopied) {
  Blob blob;
  blob.header(2, 1, 2, 1)
      .value({2})
      .value({2})
      .put(uint32_t{0})
      .put(uint32_t{1})
      .put(uint32_t{0})
      .instruction(0, 1, {0});
  Delegate delegate;
  ASSERT_EQ(delegate.init(blob), Error::Ok);
  OwnedTensor in(ScalarType::Float, {2}, std::vector<float>{1.0f, 2.0f});
  OwnedTensor sin_out(ScalarType::Float, {2}, std::vector<float>(2));
  OwnedTensor same(ScalarType::Float, {2}, std::vector<float>(2));
  ASSERT_EQ(delegate.run({&in, &sin_out, &same}), Error::Ok);
  EXPECT_FLOAT_EQ(data(sin_out)[1], std::sin(2.0f));
  EXPECT_FLOAT_EQ(data(same)[1], 2.0f);
}

struct Malformed {
  const char* name;
  Blob blob;
  std::vector<std::string> log;
};

std::vector<Malformed> malformed_blobs() {
  std::vector<Malformed> cases;
  cases.push_back({"bad magic", Blob{}, {"does not start with 'DM01'"}});
  cases.back().blob.bytes[0] = 'X';
  cases.push_back({"truncated header", Blob{}, {"inside the header"}});
  cases.back().blob.put(uint32_t{1});
  cases.push_back({"huge count", Blob{}, {"count", "exceeds"}});
  cases.back().blob.header(0xFFFFFFFFu, 0, 0, 0);
  cases.push_back({"too many dims", Blob{}, {"value 0 has 9 dimensions"}});
  cases.back().blob.header(1, 0, 0, 0).put(uint32_t{9});
  cases.push_back({"negative size", Blob{}, {"value 0 has size -4"}});
  cases.back().blob.header(1, 0, 0, 0).value({-4});
  cases.push_back({"input out of range", Blob{}, {"input 0 is value 7"}});
  cases.back().blob.header(1, 1, 0, 0).value({2}).put(uint32_t{7});
  cases.push_back({"unknown opcode", Blob{}, {"unknown opcode 9"}});
  cases.back().blob.header(2, 1, 1, 1).value({2}).value({2})
      .put(uint32_t{0}).put(uint32_t{1}).instruction(9, 1, {0});
  cases.push_back(
      {"wrong arity", Blob{}, {"(add) has 1 arguments, expected 2"}});
  cases.back().blob.header(2, 1, 1, 1).value({2}).value({2})
      .put(uint32_t{0}).put(uint32_t{1}).instruction(1, 1, {0});
  cases.push_back({"argument out of range", Blob{}, {"argument 0 is value 5"}});
  cases.back().blob.header(2, 1, 1, 1).value({2}).value({2})
      .put(uint32_t{0}).put(uint32_t{1}).instruction(0, 1, {5});
  cases.push_back({"shape mismatch", Blob{}, {"(mm)", "do not fit"}});
  cases.back().blob.header(3, 2, 1, 1).value({2, 3}).value({2, 3}).value({2, 3})
      .put(uint32_t{0}).put(uint32_t{1}).put(uint32_t{2})
      .instruction(2, 2, {0, 1});
  cases.push_back({"writes an input", Blob{}, {"writes value 0"}});
  cases.back().blob.header(1, 1, 1, 1).value({2})
      .put(uint32_t{0}).put(uint32_t{0}).instruction(0, 0, {0});
  cases.push_back({"reads before written", Blob{}, {"reads value 1 before"}});
  cases.back().blob.header(3, 1, 1, 2).value({2}).value({2}).value({2})
      .put(uint32_t{0}).put(uint32_t{2}).instruction(0, 2, {1})
      .instruction(0, 1, {0});
  cases.push_back({"unwritten output", Blob{}, {"output 0 is value 1"}});
  cases.back().blob.header(2, 1, 1, 0).value({2}).value({2})
      .put(uint32_t{0}).put(uint32_t{1});
  cases.push_back({"trailing bytes", Blob{}, {"bytes after the last"}});
  cases.back().blob.header(1, 1, 1, 0).value({2})
      .put(uint32_t{0}).put(uint32_t{0}).put(uint32_t{0});
  cases.push_back({"truncated constant", Blob{}, {"inside a constant's data"}});
  cases.back().blob.header(1, 0, 0, 0).put(uint32_t{1}).put(int64_t{4})
      .put(uint32_t{1}).put(1.0f);
  return cases;
}

TEST(DemoBackendTest, MalformedBlobsAreRefusedWithAReason) {
  for (Malformed& c : malformed_blobs()) {
    SCOPED_TRACE(c.name);
    LogCapture logs;
    Delegate delegate;
    EXPECT_NE(delegate.init(c.blob), Error::Ok);
    EXPECT_TRUE(logs.contains(c.log));
  }
}

TEST(DemoBackendTest, CallsWithWrongTensorsAreRefused) {
  Blob blob;
  blob.header(2, 1, 1, 1).value({2, 2}).value({2, 2})
      .put(uint32_t{0}).put(uint32_t{1}).instruction(0, 1, {0});
  Delegate delegate;
  ASSERT_EQ(delegate.init(blob), Error::Ok);
  OwnedTensor good(ScalarType::Float, {2, 2}, std::vector<float>(4));
  OwnedTensor wrong_shape(ScalarType::Float, {4}, std::vector<float>(4));
  OwnedTensor wrong_dtype(ScalarType::Int, {2, 2}, std::vector<int32_t>(4));
  {
    LogCapture logs;
    EXPECT_EQ(delegate.run({&good}), Error::InvalidArgument);
    EXPECT_TRUE(logs.contains(
        {"passes 1 values, expected 1 inputs and 1 outputs"}));
  }
  {
    LogCapture logs;
    EXPECT_EQ(delegate.run({&wrong_shape, &good}), Error::InvalidArgument);
    EXPECT_TRUE(logs.contains({"argument 0", "input of value 0"}));
  }
  {
    LogCapture logs;
    EXPECT_EQ(delegate.run({&good, &wrong_dtype}), Error::InvalidArgument);
    EXPECT_TRUE(logs.contains({"argument 1", "output of value 1"}));
  }
}

TEST(DemoBackendTest, RegistersUnderItsId) {
  ASSERT_EQ(executorch::backends::demo::register_demo_backend(), Error::Ok);
  ASSERT_EQ(executorch::backends::demo::register_demo_backend(), Error::Ok);
  EXPECT_NE(executorch::runtime::get_backend_class("BackendWithCompilerDemo"),
            nullptr);
}

} // namespace
