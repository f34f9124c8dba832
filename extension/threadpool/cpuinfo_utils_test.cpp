#include <executorch/extension/threadpool/cpuinfo_utils.h>

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <executorch/extension/threadpool/threadpool.h>

using executorch::extension::cpuinfo::count_performant_cores;
using executorch::extension::cpuinfo::get_num_performant_cores;

namespace {

// A fake sysfs tree in a directory of its own.
class FakeSysfs {
 public:
  explicit FakeSysfs(const std::string& name)
      : root_(::testing::TempDir() + "cpuinfo_utils_test_" + name) {
    make_directories(root_ + "/devices/system/cpu");
  }
  const std::string& root() const {
    return root_;
  }
  void write(const std::string& path, const std::string& line) {
    make_directories(root_ + "/" + path.substr(0, path.rfind('/')));
    std::ofstream(root_ + "/" + path) << line << "\n";
  }
  void capacity(uint32_t cpu, int value) {
    write("devices/system/cpu/cpu" + std::to_string(cpu) + "/cpu_capacity",
          std::to_string(value));
  }

 private:
  static void make_directories(const std::string& path) {
    for (size_t slash = path.find('/', 1); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
      mkdir(path.substr(0, slash).c_str(), 0755);
    }
    mkdir(path.c_str(), 0755);
  }
  std::string root_;
};

std::vector<uint32_t> cpus(uint32_t first, uint32_t last) {
  std::vector<uint32_t> result;
  for (uint32_t cpu = first; cpu <= last; ++cpu) {
    result.push_back(cpu);
  }
  return result;
}

TEST(CpuinfoUtils, WithoutHybridInformationEveryCoreCounts) {
  FakeSysfs sysfs("plain");
  EXPECT_EQ(count_performant_cores(sysfs.root(), cpus(0, 7)), 8u);
  EXPECT_EQ(count_performant_cores(sysfs.root(), {3}), 1u);
  EXPECT_EQ(count_performant_cores(sysfs.root(), {}), 0u);
}

TEST(CpuinfoUtils, IntelHybridAtomCoresAreLeftOut) {
  FakeSysfs sysfs("intel_hybrid");
  // 6 performance cores with 2 threads each (0-11), 8 atom cores (12-19).
  sysfs.write("devices/cpu_atom/cpus", "12-19");
  sysfs.write("devices/cpu_core/cpus", "0-11");
  EXPECT_EQ(count_performant_cores(sysfs.root(), cpus(0, 19)), 12u);
  // Only the allowed CPUs count.
  EXPECT_EQ(count_performant_cores(sysfs.root(), {0, 1, 12, 13}), 2u);
  // A process confined to efficiency cores still gets them all.
  EXPECT_EQ(count_performant_cores(sysfs.root(), {12, 13, 14}), 3u);
}

TEST(CpuinfoUtils, CpuListsWithSeveralRangesAndSinglesParse) {
  FakeSysfs sysfs("list_forms");
  sysfs.write("devices/cpu_atom/cpus", "2,4-5,9");
  EXPECT_EQ(count_performant_cores(sysfs.root(), cpus(0, 9)), 6u);
  sysfs.write("devices/cpu_atom/cpus", "garbage,7-3,x-1,8");
  EXPECT_EQ(count_performant_cores(sysfs.root(), cpus(0, 9)), 9u);
}

TEST(CpuinfoUtils, ArmLittleCoresBelowHalfTheLargestCapacityAreLeftOut) {
  FakeSysfs sysfs("arm_three_clusters");
  // A phone: 4 little (capacity 260), 3 middle (871), 1 prime (1024).
  for (uint32_t cpu = 0; cpu < 4; ++cpu) {
    sysfs.capacity(cpu, 260);
  }
  for (uint32_t cpu = 4; cpu < 7; ++cpu) {
    sysfs.capacity(cpu, 871);
  }
  sysfs.capacity(7, 1024);
  EXPECT_EQ(count_performant_cores(sysfs.root(), cpus(0, 7)), 4u);
  // Among the little cores alone, none is below half the largest.
  EXPECT_EQ(count_performant_cores(sysfs.root(), cpus(0, 3)), 4u);
  // Capacities are compared among the allowed cores only.
  EXPECT_EQ(count_performant_cores(sysfs.root(), {0, 1, 4}), 1u);
}

TEST(CpuinfoUtils, OnThisMachineAtLeastOneAndAtMostTheAllowedCores) {
  const uint32_t performant = get_num_performant_cores();
  EXPECT_GE(performant, 1u);
  EXPECT_LE(performant, executorch::extension::threadpool::cores_available());
  const std::vector<uint32_t> allowed =
      executorch::extension::cpuinfo::allowed_cpus();
  EXPECT_EQ(allowed.size(),
            executorch::extension::threadpool::cores_available());
  EXPECT_TRUE(std::is_sorted(allowed.begin(), allowed.end()));
}

} // namespace
