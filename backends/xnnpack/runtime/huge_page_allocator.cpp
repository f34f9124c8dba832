#include <executorch/backends/xnnpack/runtime/huge_page_allocator.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace executorch {
namespace backends {
namespace xnnpack {

namespace {

#if defined(__linux__) && defined(MADV_HUGEPAGE)
// The first line of a sysfs file, or "" if it cannot be read.
void read_line(const char* path, char* line, size_t size) {
  line[0] = '\0';
  FILE* file = std::fopen(path, "r");
  if (file == nullptr) {
    return;
  }
  if (std::fgets(line, static_cast<int>(size), file) == nullptr) {
    line[0] = '\0';
  }
  std::fclose(file);
}

size_t read_huge_page_size() {
  char line[128];
  read_line("/sys/kernel/mm/transparent_hugepage/enabled", line, sizeof(line));
  // The mode in force is bracketed: "always [madvise] never".
  if (line[0] == '\0' || std::strstr(line, "[never]") != nullptr) {
    return 0;
  }
  read_line(
      "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", line, sizeof(line));
  const unsigned long long size = std::strtoull(line, nullptr, 10);
  // A power of two, or no huge pages.
  return size > 0 && (size & (size - 1)) == 0 ? static_cast<size_t>(size) : 0;
}

void advise(void* block, size_t size, size_t huge) {
  // Advice only: where it is refused the block is still good memory.
  (void)::madvise(block, size & ~(huge - 1), MADV_HUGEPAGE);
}
#else
size_t read_huge_page_size() {
  return 0;
}

void advise(void*, size_t, size_t) {}
#endif

void* allocate(void*, size_t size) {
  return std::malloc(size);
}

void* reallocate(void*, void* pointer, size_t size) {
  return std::realloc(pointer, size);
}

void deallocate(void*, void* pointer) {
  std::free(pointer);
}

void* aligned_allocate(void*, size_t alignment, size_t size) {
  const size_t huge = huge_page_size();
  const bool on_huge_pages = huge != 0 && size >= huge;
  if (on_huge_pages && alignment < huge) {
    alignment = huge;
  }
  // posix_memalign wants a multiple of sizeof(void*).
  if (alignment < sizeof(void*)) {
    alignment = sizeof(void*);
  }
  void* pointer = nullptr;
  if (posix_memalign(&pointer, alignment, size) != 0) {
    return nullptr;
  }
  if (on_huge_pages) {
    advise(pointer, size, huge);
  }
  return pointer;
}

} // namespace

size_t huge_page_size() {
  static const size_t size = read_huge_page_size();
  return size;
}

const xnn_allocator& huge_page_allocator() {
  static const xnn_allocator allocator = {
      /*context=*/nullptr,
      allocate,
      reallocate,
      deallocate,
      aligned_allocate,
      /*aligned_deallocate=*/deallocate,
  };
  return allocator;
}

xnn_status initialize_xnnpack() {
  return xnn_initialize(&huge_page_allocator());
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch
