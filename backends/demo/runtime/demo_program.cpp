#include <executorch/backends/demo/runtime/demo_program.h>

#include <cmath>
#include <cstring>
#include <new>

#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace backends {
namespace demo {

using runtime::Error;
using runtime::EValue;
using runtime::MemoryAllocator;
using runtime::Result;
using runtime::Span;

namespace {

constexpr char kMagic[4] = {'D', 'M', '0', '1'};

const char* opcode_name(DemoOpcode opcode) {
  switch (opcode) {
    case DemoOpcode::kSin:
      return "sin";
    case DemoOpcode::kAdd:
      return "add";
    case DemoOpcode::kMm:
      return "mm";
  }
  return "unknown";
}

// Reads little-endian fields from the blob, failing (not reading past the
// end) once the blob runs out.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool read(void* out, size_t nbytes, const char* what) {
    if (nbytes > size_ - offset_) {
      ET_LOG(Error,
             "BackendWithCompilerDemo: blob ends at byte %zu, inside %s "
             "(%zu more bytes needed)",
             size_,
             what,
             nbytes - (size_ - offset_));
      return false;
    }
    std::memcpy(out, data_ + offset_, nbytes);
    offset_ += nbytes;
    return true;
  }

  bool u32(uint32_t* out, const char* what) {
    return read(out, sizeof(*out), what);
  }

  size_t offset() const {
    return offset_;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t offset_ = 0;
};

bool same_shape(const DemoValue& a, const DemoValue& b) {
  if (a.ndim != b.ndim) {
    return false;
  }
  for (uint32_t d = 0; d < a.ndim; ++d) {
    if (a.sizes[d] != b.sizes[d]) {
      return false;
    }
  }
  return true;
}

// True when `out` is the broadcast of `a` and `b` (sizes aligned at the
// right; a size of 1 stretches).
bool is_broadcast(const DemoValue& a,
                  const DemoValue& b,
                  const DemoValue& out) {
  if (out.ndim < a.ndim || out.ndim < b.ndim) {
    return false;
  }
  for (uint32_t d = 0; d < out.ndim; ++d) {
    const int64_t o = out.sizes[out.ndim - 1 - d];
    for (const DemoValue* in : {&a, &b}) {
      if (d < in->ndim) {
        const int64_t s = in->sizes[in->ndim - 1 - d];
        if (s != o && s != 1) {
          return false;
        }
      }
    }
  }
  return true;
}

// Checks an instruction's shapes and data flow: it reads values that are
// inputs, constants or written before (`written`), and writes one that is
// none of these.
Error check_instruction(const DemoInstruction& ins,
                        const DemoValue* values,
                        bool* written,
                        uint32_t index) {
  const DemoValue& out = values[ins.output];
  ET_CHECK_OR_RETURN_ERROR(!out.is_constant && !out.is_input &&
                               !written[ins.output],
                           InvalidProgram,
                           "BackendWithCompilerDemo: instruction %u (%s) "
                           "writes value %u, which is a constant, an input or "
                           "already written",
                           index,
                           opcode_name(ins.opcode),
                           ins.output);
  for (uint32_t a = 0; a < ins.num_args; ++a) {
    const uint32_t v = ins.args[a];
    ET_CHECK_OR_RETURN_ERROR(
        values[v].is_constant || values[v].is_input || written[v],
        InvalidProgram,
        "BackendWithCompilerDemo: instruction %u (%s) reads value %u before "
        "anything writes it",
        index,
        opcode_name(ins.opcode),
        v);
  }
  written[ins.output] = true;
  const DemoValue& a = values[ins.args[0]];
  bool ok = false;
  switch (ins.opcode) {
    case DemoOpcode::kSin:
      ok = same_shape(a, out);
      break;
    case DemoOpcode::kAdd:
      ok = is_broadcast(a, values[ins.args[1]], out);
      break;
    case DemoOpcode::kMm: {
      const DemoValue& b = values[ins.args[1]];
      ok = a.ndim == 2 && b.ndim == 2 && out.ndim == 2 &&
           a.sizes[1] == b.sizes[0] && out.sizes[0] == a.sizes[0] &&
           out.sizes[1] == b.sizes[1];
      break;
    }
  }
  ET_CHECK_OR_RETURN_ERROR(ok,
                           InvalidProgram,
                           "BackendWithCompilerDemo: instruction %u (%s): the "
                           "shapes of values %u, %u -> %u do not fit",
                           index,
                           opcode_name(ins.opcode),
                           ins.args[0],
                           ins.num_args > 1 ? ins.args[1] : ins.args[0],
                           ins.output);
  return Error::Ok;
}

void run_sin(const float* a, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    out[i] = std::sin(a[i]);
  }
}

// out = a + b with broadcasting: walks the output's index, advancing each
// input's offset by its stride (0 along stretched dimensions).
void run_add(const DemoValue& av,
             const float* a,
             const DemoValue& bv,
             const float* b,
             const DemoValue& ov,
             float* out) {
  int64_t a_stride[kMaxDims] = {};
  int64_t b_stride[kMaxDims] = {};
  for (const auto& [in, stride] :
       {std::pair<const DemoValue*, int64_t*>{&av, a_stride},
        std::pair<const DemoValue*, int64_t*>{&bv, b_stride}}) {
    int64_t step = 1;
    for (uint32_t d = 0; d < in->ndim; ++d) {
      const uint32_t in_dim = in->ndim - 1 - d;
      const uint32_t out_dim = ov.ndim - 1 - d;
      stride[out_dim] = in->sizes[in_dim] == 1 ? 0 : step;
      step *= in->sizes[in_dim];
    }
  }
  int64_t index[kMaxDims] = {};
  int64_t a_offset = 0, b_offset = 0;
  for (size_t i = 0; i < ov.numel; ++i) {
    out[i] = a[a_offset] + b[b_offset];
    for (uint32_t d = ov.ndim; d-- > 0;) {
      a_offset += a_stride[d];
      b_offset += b_stride[d];
      if (++index[d] < ov.sizes[d]) {
        break;
      }
      a_offset -= a_stride[d] * ov.sizes[d];
      b_offset -= b_stride[d] * ov.sizes[d];
      index[d] = 0;
    }
  }
}

void run_mm(const float* a, const float* b, float* out, int64_t n, int64_t k,
            int64_t m) {
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p) {
        sum += a[i * k + p] * b[p * m + j];
      }
      out[i * m + j] = sum;
    }
  }
}

Error allocate_data(DemoValue& value,
                    uint32_t index,
                    MemoryAllocator* allocator) {
  value.data =
      allocator->allocateList<float>(value.numel == 0 ? 1 : value.numel);
  ET_CHECK_OR_RETURN_ERROR(value.data != nullptr,
                           MemoryAllocationFailed,
                           "BackendWithCompilerDemo: no memory for value %u "
                           "(%zu floats)",
                           index,
                           value.numel);
  return Error::Ok;
}

} // namespace

Result<DemoProgram*> DemoProgram::parse(const void* blob,
                                        size_t size,
                                        MemoryAllocator* allocator) {
  ET_CHECK_OR_RETURN_ERROR(blob != nullptr && size >= sizeof(kMagic) &&
                               std::memcmp(blob, kMagic, sizeof(kMagic)) == 0,
                           DelegateInvalidCompatibility,
                           "BackendWithCompilerDemo: the blob does not start "
                           "with 'DM01' (%zu bytes)",
                           size);
  Reader reader(static_cast<const uint8_t*>(blob) + sizeof(kMagic),
                size - sizeof(kMagic));
  uint32_t counts[4];
  if (!reader.read(counts, sizeof(counts), "the header")) {
    return Error::InvalidProgram;
  }
  DemoProgram* program = allocator->allocateInstance<DemoProgram>();
  ET_CHECK_OR_RETURN_ERROR(program != nullptr,
                           MemoryAllocationFailed,
                           "BackendWithCompilerDemo: no memory for a program");
  new (program) DemoProgram();
  program->num_values_ = counts[0];
  program->num_inputs_ = counts[1];
  program->num_outputs_ = counts[2];
  program->num_instructions_ = counts[3];
  // Every value, index and instruction takes at least 4 bytes, so counts
  // beyond the blob's size are malformed (and never allocated).
  const size_t limit = size / 4;
  for (uint32_t count : counts) {
    ET_CHECK_OR_RETURN_ERROR(count <= limit,
                             InvalidProgram,
                             "BackendWithCompilerDemo: count %u in the header "
                             "exceeds what a %zu-byte blob can hold",
                             count,
                             size);
  }

  program->values_ = allocator->allocateList<DemoValue>(counts[0]);
  program->storage_ = allocator->allocateList<float*>(counts[0]);
  ET_CHECK_OR_RETURN_ERROR(
      counts[0] == 0 ||
          (program->values_ != nullptr && program->storage_ != nullptr),
      MemoryAllocationFailed,
      "BackendWithCompilerDemo: no memory for %u values",
      counts[0]);
  for (uint32_t v = 0; v < counts[0]; ++v) {
    DemoValue& value = program->values_[v];
    value = DemoValue{};
    if (!reader.u32(&value.ndim, "a value's rank")) {
      return Error::InvalidProgram;
    }
    ET_CHECK_OR_RETURN_ERROR(value.ndim <= kMaxDims,
                             InvalidProgram,
                             "BackendWithCompilerDemo: value %u has %u "
                             "dimensions (at most %u)",
                             v,
                             value.ndim,
                             kMaxDims);
    if (!reader.read(
            value.sizes, value.ndim * sizeof(int64_t), "a value's sizes")) {
      return Error::InvalidProgram;
    }
    value.numel = 1;
    for (uint32_t d = 0; d < value.ndim; ++d) {
      ET_CHECK_OR_RETURN_ERROR(
          value.sizes[d] >= 0 && value.sizes[d] <= (int64_t{1} << 31) &&
              value.numel <= (size_t{1} << 31),
          InvalidProgram,
          "BackendWithCompilerDemo: value %u has size %lld in dimension %u",
          v,
          static_cast<long long>(value.sizes[d]),
          d);
      value.numel *= static_cast<size_t>(value.sizes[d]);
    }
    ET_CHECK_OR_RETURN_ERROR(value.numel <= size_t{1} << 31,
                             InvalidProgram,
                             "BackendWithCompilerDemo: value %u is too large",
                             v);
    uint32_t has_data = 0;
    if (!reader.u32(&has_data, "a value's constant flag")) {
      return Error::InvalidProgram;
    }
    ET_CHECK_OR_RETURN_ERROR(has_data <= 1,
                             InvalidProgram,
                             "BackendWithCompilerDemo: value %u has constant "
                             "flag %u (expected 0 or 1)",
                             v,
                             has_data);
    value.is_constant = has_data == 1;
    if (value.is_constant) {
      ET_CHECK_OK_OR_RETURN_ERROR(allocate_data(value, v, allocator));
      if (!reader.read(value.data, value.numel * sizeof(float),
                       "a constant's data")) {
        return Error::InvalidProgram;
      }
    }
  }

  uint32_t* io = allocator->allocateList<uint32_t>(counts[1] + counts[2] + 1);
  ET_CHECK_OR_RETURN_ERROR(io != nullptr,
                           MemoryAllocationFailed,
                           "BackendWithCompilerDemo: no memory for the "
                           "input and output lists");
  for (uint32_t i = 0; i < counts[1] + counts[2]; ++i) {
    const bool is_input = i < counts[1];
    if (!reader.u32(&io[i], is_input ? "the input list" : "the output list")) {
      return Error::InvalidProgram;
    }
    ET_CHECK_OR_RETURN_ERROR(io[i] < counts[0],
                             InvalidProgram,
                             "BackendWithCompilerDemo: %s %u is value %u, "
                             "but there are %u values",
                             is_input ? "input" : "output",
                             is_input ? i : i - counts[1],
                             io[i],
                             counts[0]);
  }
  program->inputs_ = io;
  program->outputs_ = io + counts[1];
  for (uint32_t i = 0; i < counts[1]; ++i) {
    program->values_[io[i]].is_input = true;
  }
  // Intermediates and outputs made by instructions get storage here;
  // inputs and outputs use the call's tensors instead (see bind()).
  bool* is_output = allocator->allocateList<bool>(counts[0] + 1);
  bool* written = allocator->allocateList<bool>(counts[0] + 1);
  ET_CHECK_OR_RETURN_ERROR(is_output != nullptr && written != nullptr,
                           MemoryAllocationFailed,
                           "BackendWithCompilerDemo: no memory for %u flags",
                           counts[0]);
  std::memset(is_output, 0, counts[0] + 1);
  std::memset(written, 0, counts[0] + 1);
  for (uint32_t o = 0; o < counts[2]; ++o) {
    is_output[program->outputs_[o]] = true;
  }
  for (uint32_t v = 0; v < counts[0]; ++v) {
    DemoValue& value = program->values_[v];
    if (!value.is_constant && !value.is_input && !is_output[v]) {
      ET_CHECK_OK_OR_RETURN_ERROR(allocate_data(value, v, allocator));
    }
  }

  program->instructions_ = allocator->allocateList<DemoInstruction>(
      counts[3] == 0 ? 1 : counts[3]);
  ET_CHECK_OR_RETURN_ERROR(program->instructions_ != nullptr,
                           MemoryAllocationFailed,
                           "BackendWithCompilerDemo: no memory for %u "
                           "instructions",
                           counts[3]);
  for (uint32_t i = 0; i < counts[3]; ++i) {
    DemoInstruction& ins = program->instructions_[i];
    uint32_t opcode = 0;
    if (!reader.u32(&opcode, "an instruction's opcode") ||
        !reader.u32(&ins.output, "an instruction's output") ||
        !reader.u32(&ins.num_args, "an instruction's argument count")) {
      return Error::InvalidProgram;
    }
    ET_CHECK_OR_RETURN_ERROR(opcode <= static_cast<uint32_t>(DemoOpcode::kMm),
                             InvalidProgram,
                             "BackendWithCompilerDemo: instruction %u has "
                             "unknown opcode %u",
                             i,
                             opcode);
    ins.opcode = static_cast<DemoOpcode>(opcode);
    const uint32_t expected_args = ins.opcode == DemoOpcode::kSin ? 1 : 2;
    ET_CHECK_OR_RETURN_ERROR(ins.num_args == expected_args,
                             InvalidProgram,
                             "BackendWithCompilerDemo: instruction %u (%s) has "
                             "%u arguments, expected %u",
                             i,
                             opcode_name(ins.opcode),
                             ins.num_args,
                             expected_args);
    if (!reader.read(ins.args, ins.num_args * sizeof(uint32_t),
                     "an instruction's arguments") ||
        !reader.read(&ins.debug_handle, sizeof(ins.debug_handle),
                     "an instruction's debug handle")) {
      return Error::InvalidProgram;
    }
    for (uint32_t a = 0; a < ins.num_args; ++a) {
      ET_CHECK_OR_RETURN_ERROR(ins.args[a] < counts[0],
                               InvalidProgram,
                               "BackendWithCompilerDemo: instruction %u (%s) "
                               "argument %u is value %u, but there are %u "
                               "values",
                               i,
                               opcode_name(ins.opcode),
                               a,
                               ins.args[a],
                               counts[0]);
    }
    ET_CHECK_OR_RETURN_ERROR(ins.output < counts[0],
                             InvalidProgram,
                             "BackendWithCompilerDemo: instruction %u (%s) "
                             "writes value %u, but there are %u values",
                             i,
                             opcode_name(ins.opcode),
                             ins.output,
                             counts[0]);
    ET_CHECK_OK_OR_RETURN_ERROR(
        check_instruction(ins, program->values_, written, i));
  }
  for (uint32_t o = 0; o < counts[2]; ++o) {
    const uint32_t v = program->outputs_[o];
    const DemoValue& value = program->values_[v];
    ET_CHECK_OR_RETURN_ERROR(value.is_constant || value.is_input || written[v],
                             InvalidProgram,
                             "BackendWithCompilerDemo: output %u is value %u, "
                             "which nothing writes",
                             o,
                             v);
  }
  ET_CHECK_OR_RETURN_ERROR(reader.offset() + sizeof(kMagic) == size,
                           InvalidProgram,
                           "BackendWithCompilerDemo: %zu bytes after the last "
                           "instruction",
                           size - sizeof(kMagic) - reader.offset());
  return program;
}

Error DemoProgram::bind(Span<EValue*> args) const {
  ET_CHECK_OR_RETURN_ERROR(args.size() == num_inputs_ + num_outputs_,
                           InvalidArgument,
                           "BackendWithCompilerDemo: the call passes %zu "
                           "values, expected %u inputs and %u outputs",
                           args.size(),
                           num_inputs_,
                           num_outputs_);
  for (uint32_t v = 0; v < num_values_; ++v) {
    storage_[v] = values_[v].data;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const bool is_input = i < num_inputs_;
    const uint32_t v = is_input ? inputs_[i] : outputs_[i - num_inputs_];
    const DemoValue& value = values_[v];
    ET_CHECK_OR_RETURN_ERROR(args[i] != nullptr && args[i]->isTensor(),
                             InvalidArgument,
                             "BackendWithCompilerDemo: call argument %zu is "
                             "not a tensor",
                             i);
    const auto& tensor = args[i]->toTensor();
    bool fits = tensor.scalar_type() == executorch::aten::ScalarType::Float &&
                static_cast<uint32_t>(tensor.dim()) == value.ndim;
    for (uint32_t d = 0; fits && d < value.ndim; ++d) {
      fits = tensor.size(d) == value.sizes[d];
    }
    ET_CHECK_OR_RETURN_ERROR(fits,
                             InvalidArgument,
                             "BackendWithCompilerDemo: call argument %zu "
                             "(%s of value %u) is not a float32 tensor of "
                             "the compiled shape",
                             i,
                             is_input ? "input" : "output",
                             v);
    // An output that is also an input, a constant or an earlier output
    // already has storage; it is copied out after the run.
    if (is_input || storage_[v] == nullptr) {
      storage_[v] = tensor.mutable_data_ptr<float>();
    }
  }
  return Error::Ok;
}

Error DemoProgram::execute(Span<EValue*> args) const {
  ET_CHECK_OK_OR_RETURN_ERROR(bind(args));
  for (uint32_t i = 0; i < num_instructions_; ++i) {
    const DemoInstruction& ins = instructions_[i];
    const DemoValue& out = values_[ins.output];
    const float* a = storage_[ins.args[0]];
    switch (ins.opcode) {
      case DemoOpcode::kSin:
        run_sin(a, storage_[ins.output], out.numel);
        break;
      case DemoOpcode::kAdd:
        run_add(values_[ins.args[0]],
                a,
                values_[ins.args[1]],
                storage_[ins.args[1]],
                out,
                storage_[ins.output]);
        break;
      case DemoOpcode::kMm:
        run_mm(a,
               storage_[ins.args[1]],
               storage_[ins.output],
               out.sizes[0],
               values_[ins.args[0]].sizes[1],
               out.sizes[1]);
        break;
    }
  }
  for (uint32_t o = 0; o < num_outputs_; ++o) {
    float* dst = args[num_inputs_ + o]->toTensor().mutable_data_ptr<float>();
    const float* src = storage_[outputs_[o]];
    if (dst != src) {
      std::memcpy(dst, src, values_[outputs_[o]].numel * sizeof(float));
    }
  }
  return Error::Ok;
}

} // namespace demo
} // namespace backends
} // namespace executorch
