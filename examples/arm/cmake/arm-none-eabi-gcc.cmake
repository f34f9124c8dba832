# CMake toolchain file for bare-metal Arm Cortex-M with Debian's
# gcc-arm-none-eabi and newlib (nano). Pick the core with
# EXECUTORCH_ARM_CPU (cortex-m4 or cortex-m55); CMakePresets.json at the
# repository root sets it per board:
#
#   cmake --preset arm-mps2-an386 && cmake --build --preset arm-mps2-an386
#
# Everything is built without exceptions, RTTI or unwind tables, one section
# per function and object (the link drops what nothing uses), and with
# -fno-threadsafe-statics (no threads, so no __cxa_guard locking).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_OBJCOPY arm-none-eabi-objcopy CACHE FILEPATH "")
set(CMAKE_SIZE arm-none-eabi-size CACHE FILEPATH "")

# try_compile links a whole program, which needs the board's startup code
# and linker script; a static library is enough to check the compiler.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(EXECUTORCH_ARM_CPU
    cortex-m4
    CACHE STRING "Target core: cortex-m4 (with FPv4-SP) or cortex-m55")
if(EXECUTORCH_ARM_CPU STREQUAL "cortex-m4")
  set(_cpu_flags -mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard)
elseif(EXECUTORCH_ARM_CPU STREQUAL "cortex-m55")
  # Helium (MVE) with floating point; the FPU is part of the architecture.
  set(_cpu_flags -mcpu=cortex-m55 -mfloat-abi=hard)
else()
  message(FATAL_ERROR "EXECUTORCH_ARM_CPU must be cortex-m4 or cortex-m55, "
                      "not '${EXECUTORCH_ARM_CPU}'")
endif()
list(APPEND _cpu_flags -mthumb)
list(JOIN _cpu_flags " " _cpu_flags)

# Debian's toolchain resolves <stdint.h> to GCC's own copy, which does not
# say that the 64-bit types exist the way newlib's <inttypes.h> checks
# (__int64_t_defined); without these it omits PRId64 and friends.
set(_newlib_flags
    "-D__int64_t_defined=1 -D__int_least64_t_defined=1 -D__int_fast64_t_defined=1")
set(_common_flags
    "${_cpu_flags} ${_newlib_flags} -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables")
set(CMAKE_C_FLAGS_INIT "${_common_flags}")
set(CMAKE_CXX_FLAGS_INIT
    "${_common_flags} -fno-exceptions -fno-rtti -fno-threadsafe-statics")
set(CMAKE_ASM_FLAGS_INIT "${_cpu_flags}")
# The -O2 presets (the default Release is -O3).
set(CMAKE_C_FLAGS_RELEASE_INIT "-O2 -DNDEBUG")
set(CMAKE_CXX_FLAGS_RELEASE_INIT "-O2 -DNDEBUG")
# newlib-nano; the firmware brings its own startup code (-nostartfiles).
set(CMAKE_EXE_LINKER_FLAGS_INIT
    "${_cpu_flags} --specs=nano.specs -nostartfiles -Wl,--gc-sections")

# Host tools (flatc, Python) come from the build machine; libraries and
# headers only from the cross toolchain.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
