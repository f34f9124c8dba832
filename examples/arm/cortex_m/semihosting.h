#pragma once

// Arm semihosting: the firmware's console and exit code, served by the
// debugger or by QEMU (-semihosting-config enable=on,target=native). Each
// call traps with BKPT 0xAB; without a host attached that traps as a
// debug event, so only use it on a board run under a debugger or QEMU.

#include <cstddef>

namespace executorch {
namespace arm {

// What the firmware's exit code means (run.sh and the tests read it).
enum class FirmwareExit : int {
  kOk = 0,
  kError = 1, // a runtime call failed (its error was printed)
  kAbort = 2, // et_pal_abort (an ET_CHECK failed)
  kFault = 3, // a HardFault, MemManage, BusFault, UsageFault or SecureFault
  kHeapUsed = 4, // something called malloc, new or et_pal_allocate
};

// Writes `length` bytes to the host's standard output or standard error.
void semihosting_write_stdout(const char* text, size_t length);
void semihosting_write_stderr(const char* text, size_t length);

// Copies the command line the host passed (QEMU: -semihosting-config
// arg=...) into `buffer` as a NUL-terminated string; false if there is none
// or it does not fit.
bool semihosting_command_line(char* buffer, size_t size);

// Ends the program with `status` as the host process's exit code.
[[noreturn]] void semihosting_exit(FirmwareExit status);

// Writes a NUL-terminated message to standard error and exits with `status`;
// for the last words of traps and fault handlers.
[[noreturn]] void fail(FirmwareExit status, const char* message);

} // namespace arm
} // namespace executorch
