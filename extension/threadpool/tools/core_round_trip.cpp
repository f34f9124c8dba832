// How long a cache line takes to go from one core to another and back: two
// threads, pinned to the first two CPUs this process may run on, take turns
// writing one atomic counter. Prints "core round trip: <ns> ns" (median of
// --rounds rounds), or says why it cannot measure.
//
// Why: what a 2-thread job pays for its barrier and for data one thread
// wrote and the other reads. On a VM the host decides where the two
// vCPUs sit; on the 2-core AMD EPYC VM this repository is measured on the
// round trip is ~52 ns at times and ~350 ns at others (vCPUs on distant
// cores), and 2-thread model latencies move with it
// (benchmarks/cpu_benchmark.py prints it beside every row).

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <executorch/extension/threadpool/cpuinfo_utils.h>

namespace {

constexpr int kTurnsPerRound = 20000;

bool pin_to(uint32_t cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

struct alignas(64) Counter {
  std::atomic<int> value{0};
};

// Mean ns of one round trip over kTurnsPerRound, or a negative value if a
// thread could not be pinned.
double one_round(uint32_t first_cpu, uint32_t second_cpu) {
  Counter counter;
  std::atomic<bool> pinned{true};
  std::atomic<bool> ready{false};
  std::thread other([&] {
    if (!pin_to(second_cpu)) {
      pinned = false;
    }
    ready = true;
    for (int turn = 0; turn < kTurnsPerRound; ++turn) {
      while (counter.value.load(std::memory_order_acquire) != 2 * turn + 1) {
      }
      counter.value.store(2 * turn + 2, std::memory_order_release);
    }
  });
  if (!pin_to(first_cpu)) {
    pinned = false;
  }
  // Time turns only: starting and moving a thread takes milliseconds.
  while (!ready.load()) {
  }
  const auto start = std::chrono::steady_clock::now();
  for (int turn = 0; turn < kTurnsPerRound; ++turn) {
    counter.value.store(2 * turn + 1, std::memory_order_release);
    while (counter.value.load(std::memory_order_acquire) != 2 * turn + 2) {
    }
  }
  const auto end = std::chrono::steady_clock::now();
  other.join();
  if (!pinned) {
    return -1;
  }
  return std::chrono::duration<double, std::nano>(end - start).count() /
         kTurnsPerRound;
}

} // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: %s [--rounds N]\n", argv[0]);
      return 2;
    }
  }
  const std::vector<uint32_t> cpus =
      executorch::extension::cpuinfo::allowed_cpus();
  if (cpus.size() < 2) {
    std::printf("core round trip: n/a (fewer than 2 CPUs allowed)\n");
    return 0;
  }
  std::vector<double> times;
  for (int round = 0; round < rounds; ++round) {
    const double ns = one_round(cpus[0], cpus[1]);
    if (ns < 0) {
      std::printf("core round trip: n/a (cannot pin threads to CPUs %u, %u)\n",
                  cpus[0],
                  cpus[1]);
      return 0;
    }
    times.push_back(ns);
  }
  std::sort(times.begin(), times.end());
  std::printf("core round trip: %.1f ns (CPUs %u and %u, median of %d)\n",
              times[times.size() / 2],
              cpus[0],
              cpus[1],
              rounds);
  return 0;
}
