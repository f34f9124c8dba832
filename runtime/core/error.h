#pragma once

// Error codes returned by fallible runtime calls, grouped by range. The
// numeric values match ExecuTorch's so logs and bindings read the same.

#include <cstdint>

#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace runtime {

typedef uint32_t error_code_t;

enum class Error : error_code_t {
  // System errors.
  Ok = 0x00,
  Internal = 0x01,
  InvalidState = 0x02,
  EndOfMethod = 0x03,
  AlreadyLoaded = 0x04,

  // Logical errors.
  NotSupported = 0x10,
  NotImplemented = 0x11,
  InvalidArgument = 0x12,
  InvalidType = 0x13,
  OperatorMissing = 0x14,
  RegistrationExceedingMaxKernels = 0x15,
  RegistrationAlreadyRegistered = 0x16,

  // Resource errors.
  NotFound = 0x20,
  MemoryAllocationFailed = 0x21,
  AccessFailed = 0x22,
  InvalidProgram = 0x23,
  InvalidExternalData = 0x24,
  OutOfResources = 0x25,

  // Delegate errors.
  DelegateInvalidCompatibility = 0x30,
  DelegateMemoryAllocationFailed = 0x31,
  DelegateInvalidHandle = 0x32,
};

// A short name for an error, for log lines and exception messages.
constexpr const char* to_string(Error error) {
  switch (error) {
    case Error::Ok:
      return "Ok";
    case Error::Internal:
      return "Internal";
    case Error::InvalidState:
      return "InvalidState";
    case Error::EndOfMethod:
      return "EndOfMethod";
    case Error::AlreadyLoaded:
      return "AlreadyLoaded";
    case Error::NotSupported:
      return "NotSupported";
    case Error::NotImplemented:
      return "NotImplemented";
    case Error::InvalidArgument:
      return "InvalidArgument";
    case Error::InvalidType:
      return "InvalidType";
    case Error::OperatorMissing:
      return "OperatorMissing";
    case Error::RegistrationExceedingMaxKernels:
      return "RegistrationExceedingMaxKernels";
    case Error::RegistrationAlreadyRegistered:
      return "RegistrationAlreadyRegistered";
    case Error::NotFound:
      return "NotFound";
    case Error::MemoryAllocationFailed:
      return "MemoryAllocationFailed";
    case Error::AccessFailed:
      return "AccessFailed";
    case Error::InvalidProgram:
      return "InvalidProgram";
    case Error::InvalidExternalData:
      return "InvalidExternalData";
    case Error::OutOfResources:
      return "OutOfResources";
    case Error::DelegateInvalidCompatibility:
      return "DelegateInvalidCompatibility";
    case Error::DelegateMemoryAllocationFailed:
      return "DelegateMemoryAllocationFailed";
    case Error::DelegateInvalidHandle:
      return "DelegateInvalidHandle";
  }
  return "Unknown";
}

} // namespace runtime
} // namespace executorch

// Returns `error` from the enclosing function, after logging the message,
// when `cond` is false.
#define ET_CHECK_OR_RETURN_ERROR(cond, error, message, ...) \
  do {                                                      \
    if (ET_UNLIKELY(!(cond))) {                             \
      ET_LOG(Error, message, ##__VA_ARGS__);                \
      return ::executorch::runtime::Error::error;           \
    }                                                       \
  } while (0)

// Returns from the enclosing function when `expr` yields an Error other than
// Ok.
#define ET_CHECK_OK_OR_RETURN_ERROR(expr)                             \
  do {                                                                \
    const ::executorch::runtime::Error et_error_ = (expr);            \
    if (ET_UNLIKELY(et_error_ != ::executorch::runtime::Error::Ok)) { \
      return et_error_;                                               \
    }                                                                 \
  } while (0)

namespace torch {
namespace executor {
using ::executorch::runtime::Error;
} // namespace executor
} // namespace torch
