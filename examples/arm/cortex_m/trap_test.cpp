// Firmware that checks the traps of the platform layer: run it under QEMU
// with -semihosting-config arg=trap_test,arg=<what> and it
//   heap   calls malloc             -> exits kHeapUsed
//   new    calls operator new       -> exits kHeapUsed
//   abort  fails an ET_CHECK        -> exits kAbort
//   fault  runs an undefined instruction -> HardFault, exits kFault
// test/arm/test_cortex_m.py reads the exit codes and messages.

#include <executorch/examples/arm/cortex_m/semihosting.h>
#include <executorch/runtime/platform/assert.h>
#include <executorch/runtime/platform/runtime.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace {

// Keeps the compiler from proving the allocation unused.
void* volatile sink;

bool ends_with(const char* text, const char* suffix) {
  const size_t n = std::strlen(text);
  const size_t m = std::strlen(suffix);
  return n >= m && std::strcmp(text + n - m, suffix) == 0;
}

} // namespace

int main() {
  executorch::runtime::runtime_init();
  char line[64];
  if (!executorch::arm::semihosting_command_line(line, sizeof(line))) {
    executorch::arm::fail(
        executorch::arm::FirmwareExit::kError,
        "trap_test: no command line (arg=heap|new|abort|fault)");
  }
  if (ends_with(line, "heap")) {
    sink = std::malloc(16);
  } else if (ends_with(line, "new")) {
    sink = new int(1);
  } else if (ends_with(line, "abort")) {
    ET_CHECK_MSG(sink != nullptr, "trap_test: the check that fails");
  } else if (ends_with(line, "fault")) {
    asm volatile("udf #0");
  }
  executorch::arm::fail(executorch::arm::FirmwareExit::kError,
                        "trap_test: the trap did not fire");
}
