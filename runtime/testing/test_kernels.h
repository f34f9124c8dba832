#pragma once

// Test helper: tiny float kernels registered under test operator names, so
// executor tests do not depend on a kernel library.
//
//   test::add_one.out(Tensor self, *, Tensor(a!) out)        out = self + 1
//   aten::add.out(Tensor self, Tensor other, *, Scalar alpha, Tensor(a!) out)
//   test::fail.out(Tensor self, *, Tensor(a!) out)           fails
//   test::set_int.out(int value, *, int(a!) out)             out = value
//   test::scale.out(Tensor self, float scale, *, Tensor(a!) out)
//                                                   out = self * scale; a
//                                                   scale <= 0 fails, and
//                                                   a constant one fails
//                                                   the load (its schema's
//                                                   check_fixed_args)

namespace executorch {
namespace runtime {
namespace testing {

// Registers the kernels and their schemas once; later calls do nothing.
void register_test_kernels();

} // namespace testing
} // namespace runtime
} // namespace executorch
