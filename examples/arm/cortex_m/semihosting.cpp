#include <executorch/examples/arm/cortex_m/semihosting.h>

#include <cstdint>
#include <cstring>

namespace executorch {
namespace arm {

namespace {

// Operation numbers of the Arm semihosting specification.
enum Operation : uintptr_t {
  kOpen = 0x01,
  kWrite = 0x05,
  kGetCommandLine = 0x15,
  kExitExtended = 0x20,
};

// SYS_OPEN modes: ":tt" opened "w" is standard output, "a" standard error.
constexpr uintptr_t kModeWrite = 4;
constexpr uintptr_t kModeAppend = 8;

// ADP_Stopped_ApplicationExit: a normal exit, with a status code.
constexpr uintptr_t kApplicationExit = 0x20026;

uintptr_t call(Operation operation, const void* argument) {
  register uintptr_t r0 asm("r0") = operation;
  register const void* r1 asm("r1") = argument;
  asm volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

// Handles opened on first use; -1 until then.
intptr_t stdout_handle = -1;
intptr_t stderr_handle = -1;

intptr_t open_console(uintptr_t mode) {
  static const char kName[] = ":tt";
  const uintptr_t block[] = {reinterpret_cast<uintptr_t>(kName), mode,
                             sizeof(kName) - 1};
  return static_cast<intptr_t>(call(kOpen, block));
}

void write(intptr_t& handle, uintptr_t mode, const char* text, size_t length) {
  if (handle < 0) {
    handle = open_console(mode);
  }
  const uintptr_t block[] = {static_cast<uintptr_t>(handle),
                             reinterpret_cast<uintptr_t>(text), length};
  call(kWrite, block);
}

} // namespace

void semihosting_write_stdout(const char* text, size_t length) {
  write(stdout_handle, kModeWrite, text, length);
}

void semihosting_write_stderr(const char* text, size_t length) {
  write(stderr_handle, kModeAppend, text, length);
}

bool semihosting_command_line(char* buffer, size_t size) {
  if (size == 0) {
    return false;
  }
  // The host writes the line and its length back into the block.
  uintptr_t block[] = {reinterpret_cast<uintptr_t>(buffer), size};
  if (call(kGetCommandLine, block) != 0 || block[1] >= size) {
    buffer[0] = '\0';
    return false;
  }
  buffer[block[1]] = '\0';
  return true;
}

void semihosting_exit(FirmwareExit status) {
  const uintptr_t block[] = {kApplicationExit, static_cast<uintptr_t>(status)};
  call(kExitExtended, block);
  // Only reached without a semihosting host: stop here.
  for (;;) {
    asm volatile("wfi");
  }
}

void fail(FirmwareExit status, const char* message) {
  semihosting_write_stderr(message, std::strlen(message));
  semihosting_write_stderr("\n", 1);
  semihosting_exit(status);
}

} // namespace arm
} // namespace executorch
