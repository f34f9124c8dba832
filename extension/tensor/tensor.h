#pragma once

// The tensor extension: TensorPtr, make_tensor_ptr, clone_tensor_ptr and the
// factories (from_blob, empty, zeros, ones, full, rand, randn, ...).
// TensorAccessor has its own header, tensor_accessor.h, as upstream's.

#include <executorch/extension/tensor/tensor_ptr.h>
#include <executorch/extension/tensor/tensor_ptr_maker.h>
