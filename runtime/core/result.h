#pragma once

// Result<T>: either a value or an Error, never both. The value is stored in
// place (no heap).

#include <new>
#include <type_traits>
#include <utility>

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/platform/assert.h>

namespace executorch {
namespace runtime {

template <typename T>
class Result final {
 public:
  using value_type = typename std::remove_cv<T>::type;

  /* implicit */ Result(Error error)
      : error_(error == Error::Ok ? Error::Internal : error),
        has_value_(false) {}

  /* implicit */ Result(const value_type& value)
      : value_(value), has_value_(true) {}

  /* implicit */ Result(value_type&& value)
      : value_(std::move(value)), has_value_(true) {}

  Result(Result&& other) noexcept : has_value_(other.has_value_) {
    if (has_value_) {
      new (&value_) value_type(std::move(other.value_));
    } else {
      error_ = other.error_;
    }
  }

  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  Result& operator=(Result&&) = delete;

  ~Result() {
    if (has_value_) {
      value_.~value_type();
    }
  }

  ET_NODISCARD bool ok() const {
    return has_value_;
  }

  ET_NODISCARD Error error() const {
    return has_value_ ? Error::Ok : error_;
  }

  value_type& get() {
    check_ok();
    return value_;
  }
  const value_type& get() const {
    check_ok();
    return value_;
  }
  value_type& operator*() & {
    return get();
  }
  const value_type& operator*() const& {
    return get();
  }
  value_type&& operator*() && {
    check_ok();
    return std::move(value_);
  }
  value_type* operator->() {
    return &get();
  }
  const value_type* operator->() const {
    return &get();
  }

 private:
  void check_ok() const {
    ET_CHECK_MSG(has_value_, "Result holds error 0x%x", (unsigned)error_);
  }

  union {
    value_type value_;
    Error error_;
  };
  bool has_value_;
};

} // namespace runtime
} // namespace executorch

// Evaluates `expr` (a Result); on error returns that error from the enclosing
// function, otherwise moves the value into `lhs`.
#define ET_UNWRAP_CONCAT_INNER(a, b) a##b
#define ET_UNWRAP_CONCAT(a, b) ET_UNWRAP_CONCAT_INNER(a, b)
#define ET_UNWRAP(lhs, expr)                               \
  auto ET_UNWRAP_CONCAT(et_result_, __LINE__) = (expr);    \
  if (!ET_UNWRAP_CONCAT(et_result_, __LINE__).ok()) {      \
    return ET_UNWRAP_CONCAT(et_result_, __LINE__).error(); \
  }                                                        \
  lhs = std::move(*ET_UNWRAP_CONCAT(et_result_, __LINE__))

namespace torch {
namespace executor {
using ::executorch::runtime::Result;
} // namespace executor
} // namespace torch
