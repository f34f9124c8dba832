#include <executorch/extension/evalue_util/print_evalue.h>

#include <cinttypes>
#include <cmath>
#include <complex>
#include <cstdio>
#include <type_traits>

#include <executorch/extension/tensor/tensor_ptr.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>

using ::executorch::aten::ScalarType;
using ::executorch::aten::Tensor;

namespace executorch {
namespace extension {

namespace {

constexpr long kDefaultEdgeItems = 6;

// Where the stream stores its edge-item count (0: never set).
int edge_items_slot() {
  static const int slot = std::ios_base::xalloc();
  return slot;
}

long edge_items_of(std::ostream& os) {
  const long stored = os.iword(edge_items_slot());
  return stored > 0 ? stored : kDefaultEdgeItems;
}

// Prints print_item(i) for i in [0, count), separated by ", ", eliding the
// middle of long sequences.
template <typename PrintItem>
void print_items(std::ostream& os, size_t count, PrintItem print_item) {
  const size_t edge = static_cast<size_t>(edge_items_of(os));
  os << "[";
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) {
      os << ", ";
    }
    if (count > 2 * edge && i == edge) {
      os << "..., ";
      i = count - edge;
    }
    print_item(i);
  }
  os << "]";
}

void print_double(std::ostream& os, double value) {
  // A trailing dot marks a whole number as floating point, as torch does.
  if (std::isfinite(value) && std::fabs(value) < 1e15 &&
      value == std::trunc(value)) {
    os << static_cast<long long>(value) << ".";
  } else {
    os << value;
  }
}

void print_bool(std::ostream& os, bool value) {
  os << (value ? "True" : "False");
}

template <typename T>
void print_element(std::ostream& os, T value) {
  if constexpr (std::is_same<T, bool>::value) {
    print_bool(os, value);
  } else if constexpr (std::is_integral<T>::value) {
    // int8_t and uint8_t would print as characters.
    os << static_cast<long long>(value);
  } else {
    print_double(os, static_cast<double>(value));
  }
}

// As torch prints complex numbers: 1.+2.5j, 0.-1.j.
template <typename R>
void print_complex_items(std::ostream& os, const Tensor& tensor) {
  const auto* data =
      static_cast<const std::complex<R>*>(tensor.const_data_ptr());
  print_items(os, static_cast<size_t>(tensor.numel()), [&](size_t i) {
    print_double(os, data[i].real());
    os << (std::signbit(data[i].imag()) ? "-" : "+");
    print_double(os, std::fabs(static_cast<double>(data[i].imag())));
    os << "j";
  });
}

void print_tensor(std::ostream& os, const Tensor& tensor) {
  os << "tensor(sizes=";
  print_items(
      os, tensor.sizes().size(), [&](size_t i) { os << tensor.sizes()[i]; });
  if (tensor.scalar_type() != ScalarType::Float) {
    os << ", dtype=" << ::executorch::runtime::toString(tensor.scalar_type());
  }
  os << ", ";
  if (tensor.const_data_ptr() == nullptr && tensor.numel() > 0) {
    os << "<no data>)";
    return;
  }
  if (tensor.scalar_type() == ScalarType::ComplexFloat) {
    print_complex_items<float>(os, tensor);
    os << ")";
    return;
  }
  if (tensor.scalar_type() == ScalarType::ComplexDouble) {
    print_complex_items<double>(os, tensor);
    os << ")";
    return;
  }
  internal::SwitchContext context;
  ET_SWITCH_REALHBBF16_TYPES(tensor.scalar_type(), context, "print", T, [&] {
    const T* data = tensor.const_data_ptr<T>();
    print_items(os, static_cast<size_t>(tensor.numel()), [&](size_t i) {
      print_element(os, data[i]);
    });
  });
  if (context.failed) {
    os << "<" << tensor.nbytes() << " bytes>";
  }
  os << ")";
}

// Where the element at row-major position `index` lies in memory, counted
// in elements, following the tensor's strides.
ssize_t memory_offset(const Tensor& tensor, size_t index) {
  ssize_t offset = 0;
  for (ssize_t d = tensor.dim() - 1; d >= 0; --d) {
    const auto size = static_cast<size_t>(tensor.size(d));
    offset += static_cast<ssize_t>(index % size) * tensor.strides()[d];
    index /= size;
  }
  return offset;
}

// One element with every digit its type needs to be read back exactly.
template <typename T>
void print_exact(std::ostream& os, T value) {
  char text[32];
  if constexpr (std::is_same<T, bool>::value) {
    os << (value ? "true" : "false");
    return;
  } else if constexpr (std::is_integral<T>::value) {
    std::snprintf(text, sizeof(text), "%lld", static_cast<long long>(value));
  } else {
    std::snprintf(text,
                  sizeof(text),
                  std::is_same<T, double>::value ? "%.17g" : "%.9g",
                  static_cast<double>(value));
  }
  os << text;
}

} // namespace

bool print_tensor_values(std::ostream& os, const Tensor& tensor, size_t limit) {
  const auto count = static_cast<size_t>(tensor.numel());
  const size_t shown = count < limit ? count : limit;
  internal::SwitchContext context;
  ET_SWITCH_REALHBBF16_TYPES(tensor.scalar_type(), context, "print", T, [&] {
    const T* data = tensor.const_data_ptr<T>();
    for (size_t i = 0; i < shown; ++i) {
      os << (i == 0 ? "" : ", ");
      print_exact(os, data[memory_offset(tensor, i)]);
    }
  });
  if (context.failed) {
    return false;
  }
  if (shown < count) {
    os << ", ... (" << count - shown << " more)";
  }
  return true;
}

std::ostream& operator<<(std::ostream& os,
                         const evalue_edge_items& manipulator) {
  os.iword(edge_items_slot()) = manipulator.edge_items_;
  return os;
}

} // namespace extension

namespace runtime {

std::ostream& operator<<(std::ostream& os, const EValue& value) {
  using ::executorch::extension::print_bool;
  using ::executorch::extension::print_double;
  using ::executorch::extension::print_items;
  using ::executorch::extension::print_tensor;
  switch (value.tag) {
    case Tag::None:
      return os << "None";
    case Tag::Int:
      return os << value.toInt();
    case Tag::Double:
      print_double(os, value.toDouble());
      return os;
    case Tag::Bool:
      print_bool(os, value.toBool());
      return os;
    case Tag::String:
      return os << "\"" << value.toString() << "\"";
    case Tag::Tensor:
      print_tensor(os, value.toTensor());
      return os;
    default:
      break;
  }
  // Lists: their length, then their items.
  auto print_list = [&](size_t size, auto print_item) {
    os << "(len=" << size << ")";
    print_items(os, size, print_item);
  };
  switch (value.tag) {
    case Tag::ListInt: {
      const auto list = value.toIntList();
      print_list(list.size(), [&](size_t i) { os << list[i]; });
      break;
    }
    case Tag::ListDouble: {
      const auto list = value.toDoubleList();
      print_list(list.size(), [&](size_t i) { print_double(os, list[i]); });
      break;
    }
    case Tag::ListBool: {
      const auto list = value.toBoolList();
      print_list(list.size(), [&](size_t i) { print_bool(os, list[i]); });
      break;
    }
    case Tag::ListTensor: {
      const auto list = value.toTensorList();
      print_list(list.size(), [&](size_t i) { print_tensor(os, list[i]); });
      break;
    }
    case Tag::ListOptionalTensor: {
      const auto list = value.toListOptionalTensor();
      print_list(list.size(), [&](size_t i) {
        if (list[i].has_value()) {
          print_tensor(os, *list[i]);
        } else {
          os << "None";
        }
      });
      break;
    }
    default:
      os << "<EValue with tag " << static_cast<int>(value.tag) << ">";
  }
  return os;
}

} // namespace runtime
} // namespace executorch
