#pragma once

// Test helper: builds a ProgramSpec into bytes, loads the Program and one
// Method, and keeps everything they point at alive.

#include <memory>
#include <optional>
#include <vector>

#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/testing/buffer_data_loader.h>
#include <executorch/runtime/testing/managed_memory.h>
#include <executorch/runtime/testing/program_builder.h>

namespace executorch {
namespace runtime {
namespace testing {

class MethodHarness {
 public:
  ET_NODISCARD Error load_program(const ProgramSpec& spec) {
    bytes_ = build_program(spec);
    loader_ = std::make_unique<BufferDataLoader>(bytes_);
    Result<Program> program = Program::load(loader_.get());
    if (!program.ok()) {
      return program.error();
    }
    program_.emplace(std::move(*program));
    return Error::Ok;
  }

  // Loads the program and method `name`, with planned buffers as the
  // method's meta asks for, or `planned_sizes` when given.
  ET_NODISCARD Error
  load(const ProgramSpec& spec,
       const char* name = "forward",
       std::optional<std::vector<size_t>> planned_sizes = std::nullopt,
       EventTracer* event_tracer = nullptr) {
    ET_CHECK_OK_OR_RETURN_ERROR(load_program(spec));
    return load_method(name, planned_sizes, event_tracer);
  }

  ET_NODISCARD Error
  load_method(const char* name,
              std::optional<std::vector<size_t>> planned_sizes = std::nullopt,
              EventTracer* event_tracer = nullptr) {
    method_.reset();
    Result<MethodMeta> meta = program_->method_meta(name);
    if (!meta.ok()) {
      return meta.error();
    }
    memory_ = planned_sizes ? std::make_unique<ManagedMemory>(*planned_sizes)
                            : std::make_unique<ManagedMemory>(*meta);
    Result<Method> method =
        program_->load_method(name, memory_->manager(), event_tracer);
    if (!method.ok()) {
      return method.error();
    }
    method_.emplace(std::move(*method));
    return Error::Ok;
  }

  Program& program() {
    return *program_;
  }
  Method& method() {
    return *method_;
  }

 private:
  std::vector<uint8_t> bytes_;
  std::unique_ptr<BufferDataLoader> loader_;
  std::optional<Program> program_;
  std::unique_ptr<ManagedMemory> memory_;
  std::optional<Method> method_;
};

} // namespace testing
} // namespace runtime
} // namespace executorch
