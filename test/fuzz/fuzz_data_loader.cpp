// Fuzz target: the data loaders asked for hostile ranges of a hostile file.
// Input layout: 8 bytes offset, 8 bytes size, 1 byte alignment exponent,
// then the file's bytes. Each loader (buffer, file, file descriptor, mmap)
// loads and loads-into that range, then loads the file as a Program, whose
// segment offsets reach the loaders as well.

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/extension/data_loader/file_descriptor_data_loader.h>
#include <executorch/extension/data_loader/mmap_data_loader.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/runtime.h>

using executorch::extension::BufferDataLoader;
using executorch::extension::FileDataLoader;
using executorch::extension::FileDescriptorDataLoader;
using executorch::extension::MmapDataLoader;
using executorch::runtime::DataLoader;
using executorch::runtime::FreeableBuffer;
using executorch::runtime::Program;
using executorch::runtime::Result;

namespace {

constexpr size_t kPrefixBytes = 17;
// load_into gets a buffer only for ranges this small.
constexpr size_t kMaxLoadIntoBytes = 1 << 20;

void exercise(DataLoader& loader, uint64_t offset, uint64_t size) {
  const DataLoader::SegmentInfo info(DataLoader::SegmentInfo::Type::Constant);
  Result<FreeableBuffer> loaded = loader.load(offset, size, info);
  if (loaded.ok() && loaded->size() > 0) {
    // Every byte the loader claims to have must be readable.
    volatile uint8_t sum = 0;
    const auto* bytes = static_cast<const uint8_t*>(loaded->data());
    for (size_t i = 0; i < loaded->size(); ++i) {
      sum = sum + bytes[i];
    }
  }
  if (size <= kMaxLoadIntoBytes) {
    std::vector<uint8_t> buffer(static_cast<size_t>(size));
    (void)loader.load_into(offset, size, info, buffer.data());
  }
  (void)Program::load(&loader);
}

const std::string& scratch_path() {
  static const std::string path =
      "/tmp/executorch_fuzz_data_loader_" + std::to_string(getpid());
  return path;
}

bool write_file(const uint8_t* data, size_t size) {
  FILE* file = std::fopen(scratch_path().c_str(), "wb");
  if (file == nullptr) {
    return false;
  }
  const bool ok = size == 0 || std::fwrite(data, 1, size, file) == size;
  return std::fclose(file) == 0 && ok;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool ready = (executorch::runtime::runtime_init(), true);
  (void)ready;
  if (size < kPrefixBytes) {
    return 0;
  }
  uint64_t offset = 0;
  uint64_t length = 0;
  std::memcpy(&offset, data, 8);
  std::memcpy(&length, data + 8, 8);
  const size_t alignment = size_t{1} << (data[16] % 16);
  const uint8_t* file = data + kPrefixBytes;
  const size_t file_size = size - kPrefixBytes;

  // Program::load refuses misaligned data (program_test.cpp covers it);
  // an aligned copy lets the loader's ranges reach the program parser.
  std::vector<uint64_t> aligned((file_size + 7) / 8);
  if (file_size > 0) {
    std::memcpy(aligned.data(), file, file_size);
  }
  BufferDataLoader buffer_loader(aligned.data(), file_size);
  exercise(buffer_loader, offset, length);

  if (!write_file(file, file_size)) {
    return 0;
  }
  const char* path = scratch_path().c_str();
  Result<FileDataLoader> file_loader = FileDataLoader::from(path, alignment);
  if (file_loader.ok()) {
    exercise(*file_loader, offset, length);
  }
  const int fd = open(path, O_RDONLY);
  if (fd >= 0) {
    const std::string uri = "fd:///" + std::to_string(fd);
    Result<FileDescriptorDataLoader> fd_loader =
        FileDescriptorDataLoader::fromFileDescriptorUri(uri.c_str(), alignment);
    if (fd_loader.ok()) {
      exercise(*fd_loader, offset, length);
    } else {
      close(fd);
    }
  }
  Result<MmapDataLoader> mmap_loader =
      MmapDataLoader::from(path, MmapDataLoader::MlockConfig::NoMlock);
  if (mmap_loader.ok()) {
    exercise(*mmap_loader, offset, length);
  }
  return 0;
}
