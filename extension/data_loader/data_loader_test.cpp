#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/extension/data_loader/file_descriptor_data_loader.h>
#include <executorch/extension/data_loader/mmap_data_loader.h>
#include <executorch/extension/data_loader/shared_ptr_data_loader.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/testing/log_capture.h>
#include <executorch/runtime/testing/managed_memory.h>
#include <executorch/runtime/testing/owned_tensor.h>
#include <executorch/runtime/testing/temp_file.h>
#include <executorch/runtime/testing/test_kernels.h>
#include <executorch/runtime/testing/test_programs.h>

using executorch::extension::BufferDataLoader;
using executorch::extension::FileDataLoader;
using executorch::extension::FileDescriptorDataLoader;
using executorch::extension::MmapDataLoader;
using executorch::extension::SharedPtrDataLoader;
using executorch::runtime::DataLoader;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::FreeableBuffer;
using executorch::runtime::Method;
using executorch::runtime::Program;
using executorch::runtime::Result;
using executorch::runtime::testing::add_one_program;
using executorch::runtime::testing::build_program;
using executorch::runtime::testing::float_tensor;
using executorch::runtime::testing::LogCapture;
using executorch::runtime::testing::ManagedMemory;
using executorch::runtime::testing::register_test_kernels;
using executorch::runtime::testing::TempFile;

namespace {

const DataLoader::SegmentInfo kInfo(DataLoader::SegmentInfo::Type::Program);

// Bytes 0, 1, 2, ... (mod 251, so that no page repeats another's content).
std::vector<uint8_t> pattern(size_t size) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<uint8_t>(i % 251);
  }
  return bytes;
}

// Checks a successful load of [offset, offset + size) against `expected`.
void expect_loads(const DataLoader& loader,
                  const std::vector<uint8_t>& expected,
                  size_t offset,
                  size_t size) {
  Result<FreeableBuffer> buffer = loader.load(offset, size, kInfo);
  ASSERT_TRUE(buffer.ok()) << "offset " << offset << " size " << size;
  ASSERT_EQ(buffer->size(), size);
  if (size > 0) {
    EXPECT_EQ(std::memcmp(buffer->data(), expected.data() + offset, size), 0);
  }
  // One spare byte so that the destination is never null.
  std::vector<uint8_t> copy(size + 1);
  ASSERT_EQ(loader.load_into(offset, size, kInfo, copy.data()), Error::Ok);
  if (size > 0) {
    EXPECT_EQ(std::memcmp(copy.data(), expected.data() + offset, size), 0);
  }
}

// Checks that out-of-range loads fail with InvalidArgument and a log line
// that names the source, the range and the size.
void expect_rejects_bad_ranges(const DataLoader& loader,
                               size_t total,
                               const std::string& source) {
  struct Range {
    size_t offset;
    size_t size;
  };
  const Range bad[] = {
      {total + 1, 0}, {0, total + 1}, {total, 1}, {1, SIZE_MAX}, {SIZE_MAX, 2}};
  for (const Range& r : bad) {
    LogCapture logs;
    EXPECT_EQ(loader.load(r.offset, r.size, kInfo).error(),
              Error::InvalidArgument)
        << r.offset << "+" << r.size;
    EXPECT_TRUE(logs.contains({source,
                               "offset " + std::to_string(r.offset),
                               std::to_string(r.size) + " bytes",
                               "has " + std::to_string(total) + " bytes"}));
    uint8_t sink[4];
    EXPECT_EQ(loader.load_into(r.offset, r.size, kInfo, sink),
              Error::InvalidArgument);
  }
}

TEST(BufferDataLoaderTest, LoadsViewsOfTheBuffer) {
  const std::vector<uint8_t> bytes = pattern(100);
  BufferDataLoader loader(bytes.data(), bytes.size());
  EXPECT_EQ(*loader.size(), 100u);
  expect_loads(loader, bytes, 0, 100);
  expect_loads(loader, bytes, 37, 13);
  expect_loads(loader, bytes, 100, 0);
  // A view, not a copy.
  EXPECT_EQ(loader.load(10, 5, kInfo)->data(), bytes.data() + 10);
}

TEST(BufferDataLoaderTest, RejectsOutOfRangeLoads) {
  const std::vector<uint8_t> bytes = pattern(64);
  BufferDataLoader loader(bytes.data(), bytes.size());
  expect_rejects_bad_ranges(loader, 64, "buffer");
}

TEST(FileDataLoaderTest, LoadsRangesOfTheFile) {
  const std::vector<uint8_t> bytes = pattern(10000);
  TempFile file(bytes);
  Result<FileDataLoader> loader = FileDataLoader::from(file.path());
  ASSERT_TRUE(loader.ok());
  EXPECT_EQ(*loader->size(), 10000u);
  expect_loads(*loader, bytes, 0, 10000);
  expect_loads(*loader, bytes, 4095, 2);
  expect_loads(*loader, bytes, 9999, 1);
  expect_loads(*loader, bytes, 10000, 0);
}

TEST(FileDataLoaderTest, AlignsLoadedBuffers) {
  const std::vector<uint8_t> bytes = pattern(300);
  TempFile file(bytes);
  for (size_t alignment : {1, 2, 16, 64, 4096}) {
    Result<FileDataLoader> loader =
        FileDataLoader::from(file.path(), alignment);
    ASSERT_TRUE(loader.ok());
    for (size_t offset : {0, 1, 3, 255}) {
      Result<FreeableBuffer> buffer = loader->load(offset, 17, kInfo);
      ASSERT_TRUE(buffer.ok());
      EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer->data()) % alignment, 0u)
          << "alignment " << alignment;
      EXPECT_EQ(std::memcmp(buffer->data(), bytes.data() + offset, 17), 0);
    }
  }
}

TEST(FileDataLoaderTest, RejectsAlignmentThatIsNotAPowerOfTwo) {
  TempFile file(pattern(8));
  for (size_t alignment : {0, 3, 24}) {
    LogCapture logs;
    EXPECT_EQ(FileDataLoader::from(file.path(), alignment).error(),
              Error::InvalidArgument);
    EXPECT_TRUE(logs.contains({"alignment", std::to_string(alignment)}));
  }
}

TEST(FileDataLoaderTest, RejectsOutOfRangeLoads) {
  TempFile file(pattern(128));
  Result<FileDataLoader> loader = FileDataLoader::from(file.path());
  ASSERT_TRUE(loader.ok());
  expect_rejects_bad_ranges(*loader, 128, file.path());
}

TEST(FileDataLoaderTest, MissingFileIsNotFound) {
  LogCapture logs;
  EXPECT_EQ(FileDataLoader::from("/nonexistent/model.pte").error(),
            Error::NotFound);
  EXPECT_TRUE(logs.contains({"FileDataLoader", "/nonexistent/model.pte"}));
  EXPECT_EQ(FileDataLoader::from(nullptr).error(), Error::InvalidArgument);
}

TEST(FileDataLoaderTest, DirectoryIsNotAFile) {
  LogCapture logs;
  EXPECT_EQ(FileDataLoader::from("/tmp").error(), Error::AccessFailed);
  EXPECT_TRUE(logs.contains({"'/tmp' is not a regular file"}));
}

TEST(FileDataLoaderTest, MovedFromLoaderIsInert) {
  const std::vector<uint8_t> bytes = pattern(32);
  TempFile file(bytes);
  Result<FileDataLoader> loader = FileDataLoader::from(file.path());
  ASSERT_TRUE(loader.ok());
  FileDataLoader moved(std::move(*loader));
  expect_loads(moved, bytes, 4, 8);
}

TEST(MmapDataLoaderTest, LoadsRangesAtAnyOffset) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const std::vector<uint8_t> bytes = pattern(3 * page + 123);
  TempFile file(bytes);
  for (auto config : {MmapDataLoader::MlockConfig::NoMlock,
                      MmapDataLoader::MlockConfig::UseMlockIgnoreErrors}) {
    Result<MmapDataLoader> loader = MmapDataLoader::from(file.path(), config);
    ASSERT_TRUE(loader.ok());
    EXPECT_EQ(*loader->size(), bytes.size());
    expect_loads(*loader, bytes, 0, bytes.size());
    expect_loads(*loader, bytes, page - 1, 2);
    expect_loads(*loader, bytes, page, page);
    expect_loads(*loader, bytes, 2 * page + 7, page + 116);
    expect_loads(*loader, bytes, bytes.size(), 0);
  }
}

TEST(MmapDataLoaderTest, RejectsOutOfRangeLoadsAndMissingFiles) {
  TempFile file(pattern(50));
  Result<MmapDataLoader> loader =
      MmapDataLoader::from(file.path(), MmapDataLoader::MlockConfig::NoMlock);
  ASSERT_TRUE(loader.ok());
  expect_rejects_bad_ranges(*loader, 50, file.path());
  LogCapture logs;
  EXPECT_EQ(MmapDataLoader::from("/nonexistent/model.pte").error(),
            Error::NotFound);
  EXPECT_TRUE(logs.contains({"MmapDataLoader", "/nonexistent/model.pte"}));
}

// "fd:///<n>" for a fresh read-only descriptor of `path`.
std::string fd_uri(const char* path) {
  const int fd = ::open(path, O_RDONLY);
  EXPECT_GE(fd, 0);
  return "fd:///" + std::to_string(fd);
}

// True while `fd` is an open descriptor.
bool is_open(int fd) {
  return ::fcntl(fd, F_GETFD) != -1;
}

TEST(FileDescriptorDataLoaderTest, LoadsAlignedRangesAndClosesTheDescriptor) {
  const std::vector<uint8_t> bytes = pattern(5000);
  TempFile file(bytes);
  const std::string uri = fd_uri(file.path());
  const int fd = std::stoi(uri.substr(6));
  {
    Result<FileDescriptorDataLoader> loader =
        FileDescriptorDataLoader::fromFileDescriptorUri(uri.c_str(), 64);
    ASSERT_TRUE(loader.ok());
    FileDescriptorDataLoader moved(std::move(*loader));
    EXPECT_EQ(*moved.size(), 5000u);
    expect_loads(moved, bytes, 0, 5000);
    expect_loads(moved, bytes, 4097, 3);
    expect_loads(moved, bytes, 5000, 0);
    Result<FreeableBuffer> buffer = moved.load(3, 10, kInfo);
    ASSERT_TRUE(buffer.ok());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer->data()) % 64, 0u);
    expect_rejects_bad_ranges(moved, 5000, uri);
    EXPECT_TRUE(is_open(fd));
  }
  EXPECT_FALSE(is_open(fd));
}

TEST(FileDescriptorDataLoaderTest, RejectsMalformedUrisAndBadDescriptors) {
  for (const char* uri : {"",
                          "fd://3",
                          "file:///3",
                          "fd:///",
                          "fd:///-1",
                          "fd:///3x",
                          "fd:///99999999999"}) {
    LogCapture logs;
    EXPECT_EQ(FileDescriptorDataLoader::fromFileDescriptorUri(uri).error(),
              Error::InvalidArgument)
        << uri;
    EXPECT_TRUE(logs.contains({"fd:///<number>", std::string("'") + uri + "'"}))
        << uri;
  }
  EXPECT_EQ(FileDescriptorDataLoader::fromFileDescriptorUri(nullptr).error(),
            Error::InvalidArgument);
  // A number that is not an open descriptor.
  LogCapture logs;
  EXPECT_EQ(
      FileDescriptorDataLoader::fromFileDescriptorUri("fd:///987654").error(),
      Error::AccessFailed);
  EXPECT_TRUE(logs.contains({"'fd:///987654' is not an open file"}));
  // A directory is not a file, and the adopted descriptor is closed.
  const int dir_fd = ::open("/tmp", O_RDONLY);
  ASSERT_GE(dir_fd, 0);
  const std::string dir_uri = "fd:///" + std::to_string(dir_fd);
  EXPECT_EQ(
      FileDescriptorDataLoader::fromFileDescriptorUri(dir_uri.c_str()).error(),
      Error::AccessFailed);
  EXPECT_FALSE(is_open(dir_fd));
  TempFile file(pattern(8));
  const std::string uri = fd_uri(file.path());
  EXPECT_EQ(
      FileDescriptorDataLoader::fromFileDescriptorUri(uri.c_str(), 3).error(),
      Error::InvalidArgument);
}

TEST(SharedPtrDataLoaderTest, KeepsItsBytesAliveAndLoadsViews) {
  const std::vector<uint8_t> bytes = pattern(200);
  std::shared_ptr<void> data(
      new uint8_t[200], [](void* p) { delete[] static_cast<uint8_t*>(p); });
  std::memcpy(data.get(), bytes.data(), bytes.size());
  SharedPtrDataLoader loader(data, bytes.size());
  const void* raw = data.get();
  data.reset(); // The loader's copy of the pointer keeps the bytes.
  EXPECT_EQ(*loader.size(), 200u);
  expect_loads(loader, bytes, 0, 200);
  expect_loads(loader, bytes, 150, 50);
  EXPECT_EQ(loader.load(7, 3, kInfo)->data(),
            static_cast<const uint8_t*>(raw) + 7);
  expect_rejects_bad_ranges(loader, 200, "buffer");
}

// Each loader can serve a Program: load it from a file and run a method.
template <typename MakeLoader>
void expect_program_runs(MakeLoader make_loader) {
  register_test_kernels();
  TempFile file(build_program(add_one_program()));
  auto loader = make_loader(file.path());
  ASSERT_TRUE(loader.ok());
  Result<Program> program = Program::load(&loader.get());
  ASSERT_TRUE(program.ok());
  ManagedMemory memory(*program->method_meta("forward"));
  Result<Method> method = program->load_method("forward", memory.manager());
  ASSERT_TRUE(method.ok());
  auto input = float_tensor({2, 2}, {1, 2, 3, 4});
  ASSERT_EQ(method->set_input(EValue(input.tensor()), 0), Error::Ok);
  ASSERT_EQ(method->execute(), Error::Ok);
  const float* out = method->get_output(0).toTensor().const_data_ptr<float>();
  EXPECT_EQ(std::vector<float>(out, out + 4), (std::vector<float>{2, 3, 4, 5}));
}

TEST(DataLoaderProgramTest, FileDataLoaderServesAProgram) {
  expect_program_runs(
      [](const char* path) { return FileDataLoader::from(path); });
}

TEST(DataLoaderProgramTest, FileDescriptorDataLoaderServesAProgram) {
  expect_program_runs([](const char* path) {
    return FileDescriptorDataLoader::fromFileDescriptorUri(
        fd_uri(path).c_str());
  });
}

TEST(DataLoaderProgramTest, MmapDataLoaderServesAProgram) {
  expect_program_runs([](const char* path) {
    return MmapDataLoader::from(path, MmapDataLoader::MlockConfig::NoMlock);
  });
}

} // namespace
