// One handler for HardFault, MemManage, BusFault, UsageFault and
// SecureFault: it prints which fault, the PC of the faulting instruction
// (from the exception frame), the fault status registers and the index of
// the runtime instruction being executed, then exits with kFault.

#include <executorch/examples/arm/cortex_m/cortex_m.h>
#include <executorch/examples/arm/cortex_m/fault.h>
#include <executorch/examples/arm/cortex_m/format.h>
#include <executorch/examples/arm/cortex_m/semihosting.h>

#include <cstdint>

namespace executorch {
namespace arm {

namespace {

const runtime::Method* volatile executing_method = nullptr;

const char* fault_name(uint32_t exception_number) {
  switch (exception_number) {
    case 3:
      return "HardFault";
    case 4:
      return "MemManage fault";
    case 5:
      return "BusFault";
    case 6:
      return "UsageFault";
    case 7:
      return "SecureFault";
  }
  return "fault";
}

} // namespace

void set_executing_method(const runtime::Method* method) {
  executing_method = method;
}

} // namespace arm
} // namespace executorch

extern "C" {

// `frame` is the stacked r0-r3, r12, lr, pc, xpsr of the faulting context.
[[noreturn]] void report_fault(const uint32_t* frame, uint32_t exception) {
  using namespace executorch::arm;
  char message[256];
  int length = et_snprintf(
      message,
      sizeof(message),
      "firmware: %s at PC 0x%08lx (LR 0x%08lx, CFSR 0x%08lx, HFSR 0x%08lx, "
      "BFAR 0x%08lx)",
      fault_name(exception),
      static_cast<unsigned long>(frame[6]),
      static_cast<unsigned long>(frame[5]),
      static_cast<unsigned long>(ConfigurableFaultStatus::ref()),
      static_cast<unsigned long>(HardFaultStatus::ref()),
      static_cast<unsigned long>(BusFaultAddress::ref()));
  const executorch::runtime::Method* method = executing_method;
  if (method != nullptr && length > 0 &&
      static_cast<size_t>(length) < sizeof(message)) {
    et_snprintf(message + length,
                sizeof(message) - length,
                " while executing instruction %u",
                static_cast<unsigned>(method->current_instruction_index()));
  } else if (length > 0 && static_cast<size_t>(length) < sizeof(message)) {
    et_snprintf(message + length,
                sizeof(message) - length,
                " outside method execution");
  }
  fail(FirmwareExit::kFault, message);
}

// Bit 2 of EXC_RETURN (in LR) says which stack holds the frame.
__attribute__((naked)) void fault_handler() {
  asm volatile(
      "tst lr, #4\n\t"
      "ite eq\n\t"
      "mrseq r0, msp\n\t"
      "mrsne r0, psp\n\t"
      "mrs r1, ipsr\n\t"
      "b report_fault\n\t");
}

} // extern "C"
