// C library entry points the firmware replaces:
//  - every heap allocator (malloc family, operator new, et_pal_allocate)
//    ends the run with kHeapUsed, so an image that passes uses no heap;
//  - snprintf and vsnprintf go to the small formatter (format.h) instead of
//    newlib's, which would cost tens of KB of flash.

#include <executorch/examples/arm/cortex_m/format.h>
#include <executorch/examples/arm/cortex_m/semihosting.h>
#include <executorch/runtime/platform/platform.h>

#include <cstdarg>
#include <cstddef>
#include <new>

namespace {

[[noreturn]] void heap_used(const char* function) {
  char message[96];
  et_snprintf(message,
              sizeof(message),
              "firmware: %s called, but the firmware must not use the heap",
              function);
  executorch::arm::fail(executorch::arm::FirmwareExit::kHeapUsed, message);
}

} // namespace

extern "C" {

void* malloc(size_t) {
  heap_used("malloc");
}
void* calloc(size_t, size_t) {
  heap_used("calloc");
}
void* realloc(void*, size_t) {
  heap_used("realloc");
}
void free(void* pointer) {
  // free(nullptr) is a no-op any code may do; anything else came from a heap.
  if (pointer != nullptr) {
    heap_used("free");
  }
}
// newlib's reentrant variants, which its own functions call.
void* _malloc_r(void*, size_t) {
  heap_used("malloc");
}
void* _calloc_r(void*, size_t, size_t) {
  heap_used("calloc");
}
void* _realloc_r(void*, void*, size_t) {
  heap_used("realloc");
}
void _free_r(void*, void* pointer) {
  free(pointer);
}
void* et_pal_allocate(size_t) {
  heap_used("et_pal_allocate");
}
void et_pal_free(void* pointer) {
  free(pointer);
}

int vsnprintf(char* buffer, size_t size, const char* format, va_list args) {
  return et_vsnprintf(buffer, size, format, args);
}
int snprintf(char* buffer, size_t size, const char* format, ...) {
  va_list args;
  va_start(args, format);
  const int length = et_vsnprintf(buffer, size, format, args);
  va_end(args);
  return length;
}

} // extern "C"

void* operator new(size_t) {
  heap_used("operator new");
}
void* operator new[](size_t) {
  heap_used("operator new[]");
}
void* operator new(size_t, const std::nothrow_t&) noexcept {
  heap_used("operator new");
}
void* operator new[](size_t, const std::nothrow_t&) noexcept {
  heap_used("operator new[]");
}
void operator delete(void* pointer) noexcept {
  free(pointer);
}
void operator delete[](void* pointer) noexcept {
  free(pointer);
}
void operator delete(void* pointer, size_t) noexcept {
  free(pointer);
}
void operator delete[](void* pointer, size_t) noexcept {
  free(pointer);
}
