#include <executorch/extension/threadpool/cpuinfo_utils.h>

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

namespace executorch {
namespace extension {
namespace cpuinfo {

namespace {

// The first line of `path`, empty if it cannot be read.
std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The CPUs of a sysfs CPU list ("0-3,8,10-11"); what does not parse is
// skipped.
std::set<uint32_t> parse_cpu_list(const std::string& list) {
  std::set<uint32_t> cpus;
  std::stringstream items(list);
  std::string item;
  while (std::getline(items, item, ',')) {
    char* end = nullptr;
    const unsigned long first = std::strtoul(item.c_str(), &end, 10);
    if (end == item.c_str()) {
      continue;
    }
    unsigned long last = first;
    if (*end == '-') {
      const char* second = end + 1;
      last = std::strtoul(second, &end, 10);
      if (end == second || last < first || last - first > 65536) {
        continue;
      }
    }
    for (unsigned long cpu = first; cpu <= last; ++cpu) {
      cpus.insert(static_cast<uint32_t>(cpu));
    }
  }
  return cpus;
}

// Each CPU's cpu_capacity, 0 where sysfs has none.
std::vector<unsigned long> capacities(const std::string& sysfs_root,
                                      const std::vector<uint32_t>& cpus) {
  std::vector<unsigned long> result;
  for (uint32_t cpu : cpus) {
    const std::string line = read_line(sysfs_root + "/devices/system/cpu/cpu" +
                                       std::to_string(cpu) + "/cpu_capacity");
    result.push_back(std::strtoul(line.c_str(), nullptr, 10));
  }
  return result;
}

} // namespace

uint32_t count_performant_cores(const std::string& sysfs_root,
                                const std::vector<uint32_t>& cpus) {
  const std::set<uint32_t> atom =
      parse_cpu_list(read_line(sysfs_root + "/devices/cpu_atom/cpus"));
  const std::vector<unsigned long> capacity = capacities(sysfs_root, cpus);
  const unsigned long largest =
      capacity.empty() ? 0
                       : *std::max_element(capacity.begin(), capacity.end());
  uint32_t performant = 0;
  for (size_t i = 0; i < cpus.size(); ++i) {
    const bool efficiency = atom.count(cpus[i]) != 0 ||
                            (capacity[i] != 0 && capacity[i] * 2 < largest);
    performant += efficiency ? 0 : 1;
  }
  return performant != 0 ? performant : static_cast<uint32_t>(cpus.size());
}

std::vector<uint32_t> allowed_cpus() {
  std::vector<uint32_t> cpus;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (uint32_t cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) {
        cpus.push_back(cpu);
      }
    }
  }
  if (cpus.empty()) {
    for (uint32_t cpu = 0; cpu < std::thread::hardware_concurrency(); ++cpu) {
      cpus.push_back(cpu);
    }
  }
  return cpus;
}

uint32_t get_num_performant_cores() {
  return std::max<uint32_t>(1, count_performant_cores("/sys", allowed_cpus()));
}

} // namespace cpuinfo
} // namespace extension
} // namespace executorch
