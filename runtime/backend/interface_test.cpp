#include <executorch/runtime/backend/interface.h>

#include <cstring>

#include <gtest/gtest.h>

using namespace executorch::runtime;

namespace {

class NullBackend final : public BackendInterface {
 public:
  bool is_available() const override {
    return true;
  }
  Result<DelegateHandle*> init(BackendInitContext&,
                               FreeableBuffer*,
                               ArrayRef<CompileSpec>) const override {
    return static_cast<DelegateHandle*>(nullptr);
  }
  Error execute(BackendExecutionContext&,
                DelegateHandle*,
                Span<EValue*>) const override {
    return Error::Ok;
  }
};

TEST(BackendRegistryTest, RegistersAndFindsBackends) {
  static NullBackend backend;
  const size_t before = get_num_registered_backends();
  ASSERT_EQ(register_backend({"RegistryTestBackend", &backend}), Error::Ok);
  EXPECT_EQ(get_backend_class("RegistryTestBackend"), &backend);
  EXPECT_EQ(get_num_registered_backends(), before + 1);
  EXPECT_STREQ(*get_backend_name(before), "RegistryTestBackend");
  EXPECT_EQ(register_backend({"RegistryTestBackend", &backend}),
            Error::RegistrationAlreadyRegistered);
  EXPECT_EQ(get_backend_class("NotRegistered"), nullptr);
  EXPECT_EQ(get_backend_class(nullptr), nullptr);
  EXPECT_EQ(get_backend_name(get_num_registered_backends()).error(),
            Error::InvalidArgument);
  EXPECT_EQ(register_backend({nullptr, &backend}), Error::InvalidArgument);
  EXPECT_EQ(register_backend({"NoImplementation", nullptr}),
            Error::InvalidArgument);
}

TEST(BackendRegistryTest, ExecutionContextAllocatesFromTempMemory) {
  uint8_t pool[64];
  MemoryAllocator temp(sizeof(pool), pool);
  BackendExecutionContext context(nullptr, &temp, "forward");
  EXPECT_NE(context.allocate(16), nullptr);
  EXPECT_STREQ(context.get_method_name(), "forward");
  BackendExecutionContext without_temp;
  EXPECT_EQ(without_temp.allocate(16), nullptr);
}

} // namespace
