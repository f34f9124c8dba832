#pragma once

// Test helper: bytes written to a new file in /tmp, removed on destruction,
// for tests of loaders and APIs that take a path.

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

namespace executorch {
namespace runtime {
namespace testing {

class TempFile {
 public:
  explicit TempFile(const std::vector<uint8_t>& bytes) {
    char name[] = "/tmp/executorch_test_XXXXXX";
    const int fd = ::mkstemp(name);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::write(fd, bytes.data(), bytes.size()),
              static_cast<ssize_t>(bytes.size()));
    ::close(fd);
    path_ = name;
  }
  ~TempFile() {
    std::remove(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const char* path() const {
    return path_.c_str();
  }

 private:
  std::string path_;
};

} // namespace testing
} // namespace runtime
} // namespace executorch
