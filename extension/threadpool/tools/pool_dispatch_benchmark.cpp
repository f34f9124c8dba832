// What one parallel dispatch costs the calling thread: our WorkerPool
// (through pthreadpool's API, as XNNPACK calls it) against Debian's
// libpthreadpool (loaded with dlopen, so both run in one process), with and
// without PTHREADPOOL_FLAG_YIELD_WORKERS. The caller works alone for a gap
// (what runs between two parallel operators), then dispatches a job of
// 2 x `work` us; the figure is the dispatch's wall-clock time minus the
// ideal (the work divided over the threads).
//
//   pool_dispatch_benchmark [--threads N] [--rounds R]
//
// A benchmark: nothing here asserts. Run it on a quiet machine.

#include <dlfcn.h>
#include <pthreadpool.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <executorch/extension/threadpool/pthreadpool_api.h>

namespace {

using Clock = std::chrono::steady_clock;

void busy_for(double us) {
  const auto end =
      Clock::now() + std::chrono::nanoseconds(static_cast<int64_t>(us * 1000));
  while (Clock::now() < end) {
  }
}

struct Api {
  const char* name;
  pthreadpool_t (*create)(size_t);
  void (*destroy)(pthreadpool_t);
  void (*parallelize_1d)(
      pthreadpool_t, pthreadpool_task_1d_t, void*, size_t, uint32_t);
  uint32_t flags;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median extra wall-clock us of a dispatch of `items` x `work_us` after a
// `gap_us` of work on the calling thread alone.
double dispatch_overhead(const Api& api,
                         pthreadpool_t pool,
                         size_t threads,
                         double gap_us,
                         double work_us,
                         int rounds) {
  std::vector<double> extra;
  const size_t items = threads;
  for (int r = 0; r < rounds; ++r) {
    busy_for(gap_us);
    const auto start = Clock::now();
    api.parallelize_1d(
        pool,
        [](void* work, size_t) { busy_for(*static_cast<double*>(work)); },
        &work_us,
        items,
        api.flags);
    const double us =
        std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    extra.push_back(us - work_us * items / threads);
  }
  return median(extra);
}

} // namespace

int main(int argc, char** argv) {
  size_t threads = 2;
  int rounds = 400;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--threads") == 0) {
      threads = std::strtoul(argv[i + 1], nullptr, 10);
    } else if (std::strcmp(argv[i], "--rounds") == 0) {
      rounds = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "usage: %s [--threads N] [--rounds R]\n", argv[0]);
      return 2;
    }
  }
  std::vector<Api> apis = {{"ours",
                            pthreadpool_create,
                            pthreadpool_destroy,
                            pthreadpool_parallelize_1d,
                            0}};
  // RTLD_LOCAL: Debian's definitions stay out of the global scope, so this
  // program's own calls (and XNNPACK's) keep reaching ours.
  void* debian = dlopen("libpthreadpool.so.0", RTLD_NOW | RTLD_LOCAL);
  if (debian != nullptr) {
    Api api{"debian",
            reinterpret_cast<decltype(Api::create)>(
                dlsym(debian, "pthreadpool_create")),
            reinterpret_cast<decltype(Api::destroy)>(
                dlsym(debian, "pthreadpool_destroy")),
            reinterpret_cast<decltype(Api::parallelize_1d)>(
                dlsym(debian, "pthreadpool_parallelize_1d")),
            0};
    apis.push_back(api);
    api.name = "debian+yield";
    api.flags = PTHREADPOOL_FLAG_YIELD_WORKERS;
    apis.push_back(api);
  } else {
    std::printf("libpthreadpool.so.0 not found: ours only\n");
  }
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) < 0) {
    load[0] = -1;
  }
  std::printf(
      "%zu threads, %d rounds, load average %.2f\n", threads, rounds, load[0]);
  std::printf("extra wall-clock us per dispatch of %zu x work (median)\n",
              threads);
  std::printf("%-14s %8s %8s %10s\n", "pool", "gap_us", "work_us", "extra_us");
  for (const Api& api : apis) {
    pthreadpool_t pool = api.create(threads);
    // Warm up for ~100 ms: the scheduler takes milliseconds to spread new
    // threads over the cores.
    dispatch_overhead(api, pool, threads, 0, 20, 2500);
    for (double gap : {0.0, 20.0, 200.0, 2000.0}) {
      for (double work : {0.0, 20.0}) {
        std::printf("%-14s %8.0f %8.0f %10.2f\n",
                    api.name,
                    gap,
                    work,
                    dispatch_overhead(api, pool, threads, gap, work, rounds));
      }
    }
    api.destroy(pool);
  }
  return 0;
}
