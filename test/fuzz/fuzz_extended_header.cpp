// Fuzz target: the eh00 extended header parser on untrusted bytes, and
// Program::check_header on the same bytes.

#include <cstddef>
#include <cstdint>

#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/runtime.h>
#include <executorch/schema/extended_header.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool ready = (executorch::runtime::runtime_init(), true);
  (void)ready;
  (void)executorch::runtime::Program::check_header(data, size);
  auto header = executorch::runtime::ExtendedHeader::Parse(data, size);
  if (header.ok()) {
    // A parsed header's fields are plain numbers; reading them must be safe.
    volatile uint64_t sum = header->program_size + header->segment_base_offset +
                            header->segment_data_size;
    (void)sum;
  }
  return 0;
}
