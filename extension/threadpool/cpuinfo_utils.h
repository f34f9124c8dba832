#pragma once

// How many threads a compute-bound job should use: the cores this process
// may run on (its CPU affinity) without the efficiency cores of a hybrid
// CPU (upstream ExecuTorch's name and namespace). The process-wide pool
// (threadpool.h) starts with this many threads; upstream's runners pass it
// to _unsafe_reset_threadpool. A parallel job is as slow as its slowest
// share, so a share on a core of a third of the speed costs more than the
// core adds.
//
// Efficiency cores are read from Linux's sysfs: the cores listed in
// /sys/devices/cpu_atom/cpus (Intel's hybrid CPUs), or those whose
// /sys/devices/system/cpu/cpuN/cpu_capacity (ARM, RISC-V) is below half of
// the largest capacity among the allowed cores. Where sysfs says neither
// (non-hybrid CPUs, other systems), every allowed core counts.
//
// Threads: every function here may be called from any thread.
// Tests: cpuinfo_utils_test.cpp.

#include <cstdint>
#include <string>
#include <vector>

namespace executorch {
namespace extension {
namespace cpuinfo {

// The number of performant cores this process may run on, >= 1.
uint32_t get_num_performant_cores();

// The CPUs this process may run on (its affinity mask; without one, CPUs 0
// to hardware_concurrency() - 1), in increasing order.
std::vector<uint32_t> allowed_cpus();

// How many of `cpus` (CPU numbers) are performant according to the sysfs
// tree under `sysfs_root` ("/sys" on a running system). At least 1 when
// `cpus` is not empty: if every one of them is an efficiency core, they all
// count.
uint32_t count_performant_cores(const std::string& sysfs_root,
                                const std::vector<uint32_t>& cpus);

} // namespace cpuinfo
} // namespace extension
} // namespace executorch

// Upstream's deprecated spelling, still used by older clients.
namespace torch {
namespace executorch {
namespace cpuinfo {
using ::executorch::extension::cpuinfo::get_num_performant_cores;
} // namespace cpuinfo
} // namespace executorch
} // namespace torch
