// A main() for a fuzz target built without libFuzzer: runs the target once
// on each file named on the command line, or on each file of each named
// directory. ctest uses it to replay the regression inputs and the seed
// corpus on every build; a crash fails the test.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void replay(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                                   std::istreambuf_iterator<char>());
  std::printf("replay %s (%zu bytes)\n", path.c_str(), bytes.size());
  std::fflush(stdout);
  // A copy of exactly the file's size, so a sanitizer sees reads past it.
  std::vector<uint8_t> exact(bytes);
  (void)LLVMFuzzerTestOneInput(exact.data(), exact.size());
}

} // namespace

int main(int argc, char** argv) {
  size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path path(argv[i]);
    if (std::filesystem::is_directory(path)) {
      for (const auto& entry : std::filesystem::directory_iterator(path)) {
        if (entry.is_regular_file() && entry.path().filename() != "README") {
          replay(entry.path());
          ++count;
        }
      }
    } else if (std::filesystem::is_regular_file(path)) {
      replay(path);
      ++count;
    } else {
      std::fprintf(stderr, "error: no such file or directory: %s\n", argv[i]);
      return 1;
    }
  }
  std::printf("replayed %zu inputs without a crash\n", count);
  return 0;
}
