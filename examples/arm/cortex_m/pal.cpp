// The bare-metal platform layer: ticks from SysTick (the core clock, 24
// bits, extended to 64 bits by counting wraps in its interrupt), log lines
// and abort over semihosting. QEMU does not model the DWT cycle counter, so
// SysTick is the cycle count on every board.

#include <executorch/examples/arm/cortex_m/cortex_m.h>
#include <executorch/examples/arm/cortex_m/format.h>
#include <executorch/examples/arm/cortex_m/semihosting.h>
#include <executorch/runtime/platform/platform.h>

#ifndef EXECUTORCH_ARM_CPU_CLOCK_HZ
#error "EXECUTORCH_ARM_CPU_CLOCK_HZ (the board's core clock) must be defined"
#endif

namespace {

constexpr uint32_t kSysTickPeriod = 1u << 24;
constexpr uint32_t kSysTickEnable = 1u << 0;
constexpr uint32_t kSysTickInterrupt = 1u << 1;
constexpr uint32_t kSysTickCoreClock = 1u << 2;

volatile uint32_t systick_wraps = 0;

constexpr uint64_t gcd(uint64_t a, uint64_t b) {
  return b == 0 ? a : gcd(b, a % b);
}

} // namespace

extern "C" {

void SysTick_Handler() {
  systick_wraps = systick_wraps + 1;
}

void et_pal_init(void) {
  using namespace executorch::arm;
  SysTickReload::ref() = kSysTickPeriod - 1;
  SysTickValue::ref() = 0;
  SysTickControl::ref() =
      kSysTickCoreClock | kSysTickInterrupt | kSysTickEnable;
}

et_timestamp_t et_pal_current_ticks(void) {
  using executorch::arm::SysTickValue;
  // Re-read if the counter wrapped between reading the wraps and the value.
  uint32_t wraps;
  uint32_t value;
  do {
    wraps = systick_wraps;
    value = SysTickValue::ref();
  } while (wraps != systick_wraps);
  return static_cast<et_timestamp_t>(wraps) * kSysTickPeriod +
         (kSysTickPeriod - 1 - value);
}

et_tick_ratio_t et_pal_ticks_to_ns_multiplier(void) {
  constexpr uint64_t kNs = 1000000000ull;
  constexpr uint64_t kHz = EXECUTORCH_ARM_CPU_CLOCK_HZ;
  return {kNs / gcd(kNs, kHz), kHz / gcd(kNs, kHz)};
}

void et_pal_emit_log_message(et_timestamp_t timestamp,
                             et_pal_log_level_t level,
                             const char* filename,
                             const char* function,
                             size_t line,
                             const char* message,
                             size_t length) {
  (void)timestamp;
  (void)function;
  char text[320];
  int size = et_snprintf(text,
                         sizeof(text),
                         "%c executorch:%s:%u] %.*s\n",
                         static_cast<char>(level),
                         filename,
                         static_cast<unsigned>(line),
                         static_cast<int>(length),
                         message);
  if (size < 0) {
    return;
  }
  if (static_cast<size_t>(size) >= sizeof(text)) {
    size = sizeof(text) - 1;
    text[size - 1] = '\n';
  }
  executorch::arm::semihosting_write_stderr(text, static_cast<size_t>(size));
}

void et_pal_abort(void) {
  executorch::arm::fail(executorch::arm::FirmwareExit::kAbort,
                        "firmware: et_pal_abort (a runtime check failed)");
}

} // extern "C"
