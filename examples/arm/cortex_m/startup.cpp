// Reset and the vector table for Armv7-M and Armv8-M cores: copy .data
// from flash, zero .bss, enable the FPU, run static constructors, call
// main() and report its result as the semihosting exit code. The linker
// script (boards/*.ld) places .vectors first in flash and defines the
// symbols used here.

#include <executorch/examples/arm/cortex_m/cortex_m.h>
#include <executorch/examples/arm/cortex_m/semihosting.h>

#include <cstdint>
#include <cstring>

extern "C" {

// From the linker script.
extern uint32_t __data_load__[], __data_start__[], __data_end__[];
extern uint32_t __bss_start__[], __bss_end__[];
extern uint32_t __stack_top__[];
using Constructor = void (*)();
extern Constructor __init_array_start[], __init_array_end[];

int main();

// Fault handlers (fault.cpp) and the SysTick handler (pal.cpp).
void fault_handler();
void SysTick_Handler();

void unexpected_interrupt() {
  executorch::arm::fail(executorch::arm::FirmwareExit::kFault,
                        "firmware: unexpected interrupt or exception");
}

[[noreturn]] void Reset_Handler() {
  using namespace executorch::arm;
  const size_t data_bytes = reinterpret_cast<uintptr_t>(__data_end__) -
                            reinterpret_cast<uintptr_t>(__data_start__);
  std::memcpy(__data_start__, __data_load__, data_bytes);
  const size_t bss_bytes = reinterpret_cast<uintptr_t>(__bss_end__) -
                           reinterpret_cast<uintptr_t>(__bss_start__);
  std::memset(__bss_start__, 0, bss_bytes);
  // CP10 and CP11 full access: the kernels are built with a hard-float ABI.
  CoprocessorAccess::ref() |= 0xFu << 20;
  barrier();
  for (Constructor* c = __init_array_start; c != __init_array_end; ++c) {
    (*c)();
  }
  const int status = main();
  semihosting_exit(static_cast<FirmwareExit>(status));
}

using Handler = void (*)();

// Exceptions 0-15 of the architecture; the boards' device interrupts are
// never enabled, so the table stops at SysTick.
__attribute__((section(".vectors"), used)) const Handler kVectorTable[16] = {
    reinterpret_cast<Handler>(__stack_top__),
    Reset_Handler,
    unexpected_interrupt, // NMI
    fault_handler, // HardFault
    fault_handler, // MemManage
    fault_handler, // BusFault
    fault_handler, // UsageFault
    fault_handler, // SecureFault (Armv8-M)
    nullptr,
    nullptr,
    nullptr,
    unexpected_interrupt, // SVCall
    unexpected_interrupt, // DebugMonitor
    nullptr,
    unexpected_interrupt, // PendSV
    SysTick_Handler,
};

} // extern "C"
