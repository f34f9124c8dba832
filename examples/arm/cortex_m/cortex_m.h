#pragma once

// The few Cortex-M system registers the firmware touches (Armv7-M and
// Armv8-M share these addresses in the System Control Space).

#include <cstdint>

namespace executorch {
namespace arm {

template <uintptr_t kAddress>
struct Register {
  static volatile uint32_t& ref() {
    return *reinterpret_cast<volatile uint32_t*>(kAddress);
  }
};

// SysTick: a 24-bit down counter clocked by the core.
using SysTickControl = Register<0xE000E010>;
using SysTickReload = Register<0xE000E014>;
using SysTickValue = Register<0xE000E018>;
// Coprocessor access: CP10/CP11 full access enables the FPU (and Helium).
using CoprocessorAccess = Register<0xE000ED88>;
// Configurable fault status and the addresses of the faulting access.
using ConfigurableFaultStatus = Register<0xE000ED28>;
using HardFaultStatus = Register<0xE000ED2C>;
using MemManageFaultAddress = Register<0xE000ED34>;
using BusFaultAddress = Register<0xE000ED38>;

// Data and instruction barriers after enabling a system feature.
inline void barrier() {
  asm volatile("dsb\n\tisb" ::: "memory");
}

} // namespace arm
} // namespace executorch
