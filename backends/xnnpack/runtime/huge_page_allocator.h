#pragma once

// XNNPACK's memory, with its large blocks (the weights it packs, above all)
// on transparent huge pages where the system allows it.
//
// An fp32 decode step streams every packed weight once per token (~400 MB
// for a 124M-parameter Llama). On 4 KB pages that stream misses the TLB
// every 4 KB, and under a hypervisor each miss walks two page tables; on
// 2 MB pages it misses every 2 MB. With THP in "madvise" mode (a common
// default) a process gets huge pages only for memory it advises, and
// malloc advises none. So blocks of at least one huge page are allocated
// huge-page aligned and their whole huge pages advised (MADV_HUGEPAGE)
// before XNNPACK writes them. The tail past the last whole huge page is not
// advised, so a block stays as resident as it is with malloc. Smaller
// blocks are malloc's. Where the advice is refused (THP "never", no THP,
// not Linux) blocks are plain aligned heap memory.

#include <cstddef>

#include <xnnpack.h>

namespace executorch {
namespace backends {
namespace xnnpack {

// xnn_initialize with huge_page_allocator(). XNNPACK keeps the allocator of
// its first initialization in the process, so every caller in this backend
// initializes through here. Thread-safe.
xnn_status initialize_xnnpack();

const xnn_allocator& huge_page_allocator();

// The transparent huge page size (/sys/kernel/mm/transparent_hugepage/
// hpage_pmd_size, usually 2 MB) aligned_allocate advises for, or 0 where
// there is none or THP is "never". Read once; thread-safe.
size_t huge_page_size();

} // namespace xnnpack
} // namespace backends
} // namespace executorch
