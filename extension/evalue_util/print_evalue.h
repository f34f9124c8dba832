#pragma once

// Prints EValues compactly for logs and command-line tools:
//
//   std::cout << evalue;                 // tensor(sizes=[2, 3], [1., 2., ...])
//   std::cout << evalue_edge_items(2) << evalue;
//
// Scalars print as Python would (3, 2.5, True, None); strings quoted; lists
// as (len=N)[...]. A tensor prints its sizes, its dtype unless it is Float,
// and its elements in memory order; when there are more than twice the edge
// items (6 by default) only that many from each end are shown, around "...".
//
// print_tensor_values() is the exact form command-line tools print outputs
// in: elements in logical order with every digit needed to read them back.

#include <cstddef>
#include <ostream>

#include <executorch/runtime/core/evalue.h>

namespace executorch {
namespace runtime {

std::ostream& operator<<(std::ostream& os, const EValue& value);

} // namespace runtime

namespace extension {

// Writes up to `limit` elements of `tensor` in logical (row-major) order,
// whatever its dim order, separated by ", ": integers as integers, Bool as
// true/false, floating point with enough digits to read back the exact value
// of its dtype; then ", ... (N more)" when some are left out. Returns false,
// having written nothing, for a dtype without printable numbers.
bool print_tensor_values(std::ostream& os,
                         const ::executorch::aten::Tensor& tensor,
                         size_t limit);

// Stream manipulator: the number of elements printed at each end of a long
// tensor or list, for the EValues printed later to the same stream.
class evalue_edge_items final {
 public:
  explicit evalue_edge_items(long edge_items) : edge_items_(edge_items) {}
  friend std::ostream& operator<<(std::ostream& os,
                                  const evalue_edge_items& manipulator);

 private:
  long edge_items_;
};

} // namespace extension
} // namespace executorch
