#pragma once

// FunctionRef<R(Args...)>: a non-owning reference to a callable, two words,
// no heap. It must not outlive the callable it refers to: pass it down a
// call, never store it.

#include <cstdint>
#include <type_traits>
#include <utility>

namespace executorch {
namespace runtime {

template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> final {
 public:
  template <typename Callable,
            typename = std::enable_if_t<
                !std::is_same<std::decay_t<Callable>, FunctionRef>::value>>
  /* implicit */ FunctionRef(Callable&& callable)
      : callable_(const_cast<void*>(static_cast<const void*>(&callable))),
        invoke_(&invoke<std::remove_reference_t<Callable>>) {}

  R operator()(Args... args) const {
    return invoke_(callable_, std::forward<Args>(args)...);
  }

 private:
  template <typename Callable>
  static R invoke(void* callable, Args... args) {
    return (*static_cast<Callable*>(callable))(std::forward<Args>(args)...);
  }

  void* callable_;
  R (*invoke_)(void*, Args...);
};

} // namespace runtime
} // namespace executorch
