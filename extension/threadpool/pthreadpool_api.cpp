// pthreadpool's C API (pthreadpool.h) on WorkerPool. Linked into a program,
// these definitions take the place of Debian's libpthreadpool for every
// caller, XNNPACK included: an executable's own definitions, and a Python
// extension module's exported ones, come before the libraries it loads in
// the dynamic linker's search. pthreadpool_api.h checks that they did.
//
// Every parallelize function is a grid of up to six dimensions cut into
// tiles (tile 1 on the dimensions the function does not tile); the pool
// runs chunks of the grid's tiles in row-major order.

#include <pthreadpool.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <initializer_list>
#include <memory>

#include <executorch/extension/threadpool/pthreadpool_api.h>
#include <executorch/extension/threadpool/threadpool.h>
#include <executorch/extension/threadpool/worker_pool.h>

using executorch::extension::threadpool::WorkerPool;

// What a pthreadpool_t of this library points to.
struct pthreadpool {
  uint64_t tag;
  std::unique_ptr<WorkerPool> workers;
};

namespace executorch {
namespace extension {
namespace threadpool {

struct ProbeBlock {
  uint64_t tag;
  std::atomic<uint64_t> calls;
  // Zeros where any pthreadpool keeps its thread count: another
  // implementation given the probe sees a pool of no threads.
  unsigned char zeros[4096];
};

namespace {

// First words of a pool and of a probe (ASCII "etpool\0\0", "etprobe\0").
constexpr uint64_t kPoolTag = 0x00006c6f6f707465;
constexpr uint64_t kProbeTag = 0x0065626f72707465;

uint64_t tag_of(pthreadpool_t pool) {
  uint64_t tag;
  std::memcpy(&tag, pool, sizeof(tag));
  return tag;
}

// The workers of a pool of this library; null for a null pool or a probe.
WorkerPool* workers_of(pthreadpool_t pool) {
  return pool != nullptr && tag_of(pool) == kPoolTag ? pool->workers.get()
                                                     : nullptr;
}

constexpr int kMaxDims = 6;

struct Grid;
using Invoke = void (*)(const Grid& grid,
                        const size_t* start,
                        const size_t* size);

// A parallelize call: the caller's task, its grid and how to call it.
struct Grid {
  void (*task)();
  void* context;
  uint32_t uarch_index;
  Invoke invoke;
  int dims;
  size_t range[kMaxDims];
  size_t tile[kMaxDims];
  size_t tiles[kMaxDims]; // tiles along each dimension
};

template <typename Task>
Task task_of(const Grid& grid) {
  return reinterpret_cast<Task>(grid.task);
}

// Runs tiles [begin, end) of the grid, counting them in row-major order.
void run_tiles(void* context, size_t begin, size_t end) {
  const Grid& grid = *static_cast<const Grid*>(context);
  size_t index[kMaxDims];
  size_t rest = begin;
  for (int d = grid.dims - 1; d >= 0; --d) {
    index[d] = rest % grid.tiles[d];
    rest /= grid.tiles[d];
  }
  size_t start[kMaxDims];
  size_t size[kMaxDims];
  for (size_t t = begin; t < end; ++t) {
    for (int d = 0; d < grid.dims; ++d) {
      start[d] = index[d] * grid.tile[d];
      size[d] = std::min(grid.tile[d], grid.range[d] - start[d]);
    }
    grid.invoke(grid, start, size);
    for (int d = grid.dims - 1; d >= 0 && ++index[d] == grid.tiles[d]; --d) {
      index[d] = 0;
    }
  }
}

template <typename Task>
void run_grid(pthreadpool_t pool,
              Task task,
              void* context,
              uint32_t flags,
              std::initializer_list<size_t> ranges,
              std::initializer_list<size_t> tiles,
              Invoke invoke,
              uint32_t uarch_index = 0) {
  Grid grid{reinterpret_cast<void (*)()>(task),
            context,
            uarch_index,
            invoke,
            static_cast<int>(ranges.size()),
            {},
            {},
            {}};
  size_t items = 1;
  for (int d = 0; d < grid.dims; ++d) {
    grid.range[d] = ranges.begin()[d];
    grid.tile[d] = std::max<size_t>(1, tiles.begin()[d]);
    grid.tiles[d] = (grid.range[d] + grid.tile[d] - 1) / grid.tile[d];
    items *= grid.tiles[d];
  }
  if (items == 0) {
    return;
  }
  WorkerPool* workers = workers_of(pool);
  if (pool != nullptr && workers == nullptr) {
    reinterpret_cast<ProbeBlock*>(pool)->calls.fetch_add(1);
  }
  if (workers != nullptr) {
    workers->run(run_tiles, &grid, items, flags);
  } else {
    WorkerPool::run_on_caller(run_tiles, &grid, items, flags);
  }
}

} // namespace

PthreadpoolProbe::PthreadpoolProbe() : block_(new ProbeBlock{}) {
  block_->tag = kProbeTag;
}

PthreadpoolProbe::~PthreadpoolProbe() = default;

pthreadpool_t PthreadpoolProbe::get() const {
  return reinterpret_cast<pthreadpool_t>(block_.get());
}

bool PthreadpoolProbe::reached_this_library() const {
  return block_->calls.load() != 0;
}

std::shared_ptr<pthreadpool> make_pthreadpool(size_t threads) {
  pthreadpool_t pool = pthreadpool_create(threads);
  if (pool == nullptr) {
    return nullptr;
  }
  return std::shared_ptr<pthreadpool>(pool, pthreadpool_destroy);
}

} // namespace threadpool
} // namespace extension
} // namespace executorch

using executorch::extension::threadpool::cores_available;
using executorch::extension::threadpool::Grid;
using executorch::extension::threadpool::kPoolTag;
using executorch::extension::threadpool::run_grid;
using executorch::extension::threadpool::task_of;
using executorch::extension::threadpool::workers_of;

#define ET_PTHREADPOOL_API extern "C" __attribute__((visibility("default")))

ET_PTHREADPOOL_API pthreadpool_t pthreadpool_create(size_t threads_count) {
  std::unique_ptr<WorkerPool> workers = WorkerPool::create(
      threads_count != 0 ? threads_count : cores_available());
  if (workers == nullptr) {
    return nullptr;
  }
  return new pthreadpool{kPoolTag, std::move(workers)};
}

ET_PTHREADPOOL_API void pthreadpool_destroy(pthreadpool_t threadpool) {
  if (workers_of(threadpool) != nullptr) {
    delete threadpool;
  }
}

ET_PTHREADPOOL_API size_t
pthreadpool_get_threads_count(pthreadpool_t threadpool) {
  WorkerPool* workers = workers_of(threadpool);
  return workers != nullptr ? workers->threads() : 1;
}

ET_PTHREADPOOL_API void pthreadpool_parallelize_1d(pthreadpool_t pool,
                                                   pthreadpool_task_1d_t task,
                                                   void* context,
                                                   size_t range,
                                                   uint32_t flags) {
  run_grid(pool,
           task,
           context,
           flags,
           {range},
           {1},
           [](const Grid& g, const size_t* s, const size_t*) {
             task_of<pthreadpool_task_1d_t>(g)(g.context, s[0]);
           });
}

ET_PTHREADPOOL_API void pthreadpool_parallelize_1d_with_uarch(
    pthreadpool_t pool,
    pthreadpool_task_1d_with_id_t task,
    void* context,
    uint32_t default_uarch_index,
    uint32_t /*max_uarch_index*/,
    size_t range,
    uint32_t flags) {
  // Without cpuinfo every thread reports the default microarchitecture,
  // as pthreadpool built without cpuinfo does.
  run_grid(
      pool,
      task,
      context,
      flags,
      {range},
      {1},
      [](const Grid& g, const size_t* s, const size_t*) {
        task_of<pthreadpool_task_1d_with_id_t>(g)(
            g.context, g.uarch_index, s[0]);
      },
      default_uarch_index);
}

ET_PTHREADPOOL_API void pthreadpool_parallelize_1d_tile_1d(
    pthreadpool_t pool,
    pthreadpool_task_1d_tile_1d_t task,
    void* context,
    size_t range,
    size_t tile,
    uint32_t flags) {
  run_grid(pool,
           task,
           context,
           flags,
           {range},
           {tile},
           [](const Grid& g, const size_t* s, const size_t* n) {
             task_of<pthreadpool_task_1d_tile_1d_t>(g)(g.context, s[0], n[0]);
           });
}

ET_PTHREADPOOL_API void pthreadpool_parallelize_2d(pthreadpool_t pool,
                                                   pthreadpool_task_2d_t task,
                                                   void* context,
                                                   size_t range_i,
                                                   size_t range_j,
                                                   uint32_t flags) {
  run_grid(pool,
           task,
           context,
           flags,
           {range_i, range_j},
           {1, 1},
           [](const Grid& g, const size_t* s, const size_t*) {
             task_of<pthreadpool_task_2d_t>(g)(g.context, s[0], s[1]);
           });
}

ET_PTHREADPOOL_API void pthreadpool_parallelize_2d_tile_1d(
    pthreadpool_t pool,
    pthreadpool_task_2d_tile_1d_t task,
    void* context,
    size_t range_i,
    size_t range_j,
    size_t tile_j,
    uint32_t flags) {
  run_grid(pool,
           task,
           context,
           flags,
           {range_i, range_j},
           {1, tile_j},
           [](const Grid& g, const size_t* s, const size_t* n) {
             task_of<pthreadpool_task_2d_tile_1d_t>(g)(
                 g.context, s[0], s[1], n[1]);
           });
}

ET_PTHREADPOOL_API void pthreadpool_parallelize_2d_tile_2d(
    pthreadpool_t pool,
    pthreadpool_task_2d_tile_2d_t task,
    void* context,
    size_t range_i,
    size_t range_j,
    size_t tile_i,
    size_t tile_j,
    uint32_t flags) {
  run_grid(pool,
           task,
           context,
           flags,
           {range_i, range_j},
           {tile_i, tile_j},
           [](const Grid& g, const size_t* s, const size_t* n) {
             task_of<pthreadpool_task_2d_tile_2d_t>(g)(
                 g.context, s[0], s[1], n[0], n[1]);
           });
}

ET_PTHREADPOOL_API void pthreadpool_parallelize_2d_tile_2d_with_uarch(
    pthreadpool_t pool,
    pthreadpool_task_2d_tile_2d_with_id_t task,
    void* context,
    uint32_t default_uarch_index,
    uint32_t /*max_uarch_index*/,
    size_t range_i,
    size_t range_j,
    size_t tile_i,
    size_t tile_j,
    uint32_t flags) {
  run_grid(
      pool,
      task,
      context,
      flags,
      {range_i, range_j},
      {tile_i, tile_j},
      [](const Grid& g, const size_t* s, const size_t* n) {
        task_of<pthreadpool_task_2d_tile_2d_with_id_t>(g)(
            g.context, g.uarch_index, s[0], s[1], n[0], n[1]);
      },
      default_uarch_index);
}

ET_PTHREADPOOL_API void pthreadpool_parallelize_3d(pthreadpool_t pool,
                                                   pthreadpool_task_3d_t task,
                                                   void* context,
                                                   size_t range_i,
                                                   size_t range_j,
                                                   size_t range_k,
                                                   uint32_t flags) {
  run_grid(pool,
           task,
           context,
           flags,
           {range_i, range_j, range_k},
           {1, 1, 1},
           [](const Grid& g, const size_t* s, const size_t*) {
             task_of<pthreadpool_task_3d_t>(g)(g.context, s[0], s[1], s[2]);
           });
}

ET_PTHREADPOOL_API void pthreadpool_parallelize_3d_tile_1d(
    pthreadpool_t pool,
    pthreadpool_task_3d_tile_1d_t task,
    void* context,
    size_t range_i,
    size_t range_j,
    size_t range_k,
    size_t tile_k,
    uint32_t flags) {
  run_grid(pool,
           task,
           context,
           flags,
           {range_i, range_j, range_k},
           {1, 1, tile_k},
           [](const Grid& g, const size_t* s, const size_t* n) {
             task_of<pthreadpool_task_3d_tile_1d_t>(g)(
                 g.context, s[0], s[1], s[2], n[2]);
           });
}

ET_PTHREADPOOL_API void pthreadpool_parallelize_3d_tile_2d(
    pthreadpool_t pool,
    pthreadpool_task_3d_tile_2d_t task,
    void* context,
    size_t range_i,
    size_t range_j,
    size_t range_k,
    size_t tile_j,
    size_t tile_k,
    uint32_t flags) {
  run_grid(pool,
           task,
           context,
           flags,
           {range_i, range_j, range_k},
           {1, tile_j, tile_k},
           [](const Grid& g, const size_t* s, const size_t* n) {
             task_of<pthreadpool_task_3d_tile_2d_t>(g)(
                 g.context, s[0], s[1], s[2], n[1], n[2]);
           });
}

ET_PTHREADPOOL_API void pthreadpool_parallelize_3d_tile_2d_with_uarch(
    pthreadpool_t pool,
    pthreadpool_task_3d_tile_2d_with_id_t task,
    void* context,
    uint32_t default_uarch_index,
    uint32_t /*max_uarch_index*/,
    size_t range_i,
    size_t range_j,
    size_t range_k,
    size_t tile_j,
    size_t tile_k,
    uint32_t flags) {
  run_grid(
      pool,
      task,
      context,
      flags,
      {range_i, range_j, range_k},
      {1, tile_j, tile_k},
      [](const Grid& g, const size_t* s, const size_t* n) {
        task_of<pthreadpool_task_3d_tile_2d_with_id_t>(g)(
            g.context, g.uarch_index, s[0], s[1], s[2], n[1], n[2]);
      },
      default_uarch_index);
}

ET_PTHREADPOOL_API void pthreadpool_parallelize_4d(pthreadpool_t pool,
                                                   pthreadpool_task_4d_t task,
                                                   void* context,
                                                   size_t range_i,
                                                   size_t range_j,
                                                   size_t range_k,
                                                   size_t range_l,
                                                   uint32_t flags) {
  run_grid(pool,
           task,
           context,
           flags,
           {range_i, range_j, range_k, range_l},
           {1, 1, 1, 1},
           [](const Grid& g, const size_t* s, const size_t*) {
             task_of<pthreadpool_task_4d_t>(g)(
                 g.context, s[0], s[1], s[2], s[3]);
           });
}

ET_PTHREADPOOL_API void pthreadpool_parallelize_4d_tile_1d(
    pthreadpool_t pool,
    pthreadpool_task_4d_tile_1d_t task,
    void* context,
    size_t range_i,
    size_t range_j,
    size_t range_k,
    size_t range_l,
    size_t tile_l,
    uint32_t flags) {
  run_grid(pool,
           task,
           context,
           flags,
           {range_i, range_j, range_k, range_l},
           {1, 1, 1, tile_l},
           [](const Grid& g, const size_t* s, const size_t* n) {
             task_of<pthreadpool_task_4d_tile_1d_t>(g)(
                 g.context, s[0], s[1], s[2], s[3], n[3]);
           });
}

ET_PTHREADPOOL_API void pthreadpool_parallelize_4d_tile_2d(
    pthreadpool_t pool,
    pthreadpool_task_4d_tile_2d_t task,
    void* context,
    size_t range_i,
    size_t range_j,
    size_t range_k,
    size_t range_l,
    size_t tile_k,
    size_t tile_l,
    uint32_t flags) {
  run_grid(pool,
           task,
           context,
           flags,
           {range_i, range_j, range_k, range_l},
           {1, 1, tile_k, tile_l},
           [](const Grid& g, const size_t* s, const size_t* n) {
             task_of<pthreadpool_task_4d_tile_2d_t>(g)(
                 g.context, s[0], s[1], s[2], s[3], n[2], n[3]);
           });
}

ET_PTHREADPOOL_API void pthreadpool_parallelize_4d_tile_2d_with_uarch(
    pthreadpool_t pool,
    pthreadpool_task_4d_tile_2d_with_id_t task,
    void* context,
    uint32_t default_uarch_index,
    uint32_t /*max_uarch_index*/,
    size_t range_i,
    size_t range_j,
    size_t range_k,
    size_t range_l,
    size_t tile_k,
    size_t tile_l,
    uint32_t flags) {
  run_grid(
      pool,
      task,
      context,
      flags,
      {range_i, range_j, range_k, range_l},
      {1, 1, tile_k, tile_l},
      [](const Grid& g, const size_t* s, const size_t* n) {
        task_of<pthreadpool_task_4d_tile_2d_with_id_t>(g)(
            g.context, g.uarch_index, s[0], s[1], s[2], s[3], n[2], n[3]);
      },
      default_uarch_index);
}

ET_PTHREADPOOL_API void pthreadpool_parallelize_5d(pthreadpool_t pool,
                                                   pthreadpool_task_5d_t task,
                                                   void* context,
                                                   size_t range_i,
                                                   size_t range_j,
                                                   size_t range_k,
                                                   size_t range_l,
                                                   size_t range_m,
                                                   uint32_t flags) {
  run_grid(pool,
           task,
           context,
           flags,
           {range_i, range_j, range_k, range_l, range_m},
           {1, 1, 1, 1, 1},
           [](const Grid& g, const size_t* s, const size_t*) {
             task_of<pthreadpool_task_5d_t>(g)(
                 g.context, s[0], s[1], s[2], s[3], s[4]);
           });
}

ET_PTHREADPOOL_API void pthreadpool_parallelize_5d_tile_1d(
    pthreadpool_t pool,
    pthreadpool_task_5d_tile_1d_t task,
    void* context,
    size_t range_i,
    size_t range_j,
    size_t range_k,
    size_t range_l,
    size_t range_m,
    size_t tile_m,
    uint32_t flags) {
  run_grid(pool,
           task,
           context,
           flags,
           {range_i, range_j, range_k, range_l, range_m},
           {1, 1, 1, 1, tile_m},
           [](const Grid& g, const size_t* s, const size_t* n) {
             task_of<pthreadpool_task_5d_tile_1d_t>(g)(
                 g.context, s[0], s[1], s[2], s[3], s[4], n[4]);
           });
}

ET_PTHREADPOOL_API void pthreadpool_parallelize_5d_tile_2d(
    pthreadpool_t pool,
    pthreadpool_task_5d_tile_2d_t task,
    void* context,
    size_t range_i,
    size_t range_j,
    size_t range_k,
    size_t range_l,
    size_t range_m,
    size_t tile_l,
    size_t tile_m,
    uint32_t flags) {
  run_grid(pool,
           task,
           context,
           flags,
           {range_i, range_j, range_k, range_l, range_m},
           {1, 1, 1, tile_l, tile_m},
           [](const Grid& g, const size_t* s, const size_t* n) {
             task_of<pthreadpool_task_5d_tile_2d_t>(g)(
                 g.context, s[0], s[1], s[2], s[3], s[4], n[3], n[4]);
           });
}

ET_PTHREADPOOL_API void pthreadpool_parallelize_6d(pthreadpool_t pool,
                                                   pthreadpool_task_6d_t task,
                                                   void* context,
                                                   size_t range_i,
                                                   size_t range_j,
                                                   size_t range_k,
                                                   size_t range_l,
                                                   size_t range_m,
                                                   size_t range_n,
                                                   uint32_t flags) {
  run_grid(pool,
           task,
           context,
           flags,
           {range_i, range_j, range_k, range_l, range_m, range_n},
           {1, 1, 1, 1, 1, 1},
           [](const Grid& g, const size_t* s, const size_t*) {
             task_of<pthreadpool_task_6d_t>(g)(
                 g.context, s[0], s[1], s[2], s[3], s[4], s[5]);
           });
}

ET_PTHREADPOOL_API void pthreadpool_parallelize_6d_tile_1d(
    pthreadpool_t pool,
    pthreadpool_task_6d_tile_1d_t task,
    void* context,
    size_t range_i,
    size_t range_j,
    size_t range_k,
    size_t range_l,
    size_t range_m,
    size_t range_n,
    size_t tile_n,
    uint32_t flags) {
  run_grid(pool,
           task,
           context,
           flags,
           {range_i, range_j, range_k, range_l, range_m, range_n},
           {1, 1, 1, 1, 1, tile_n},
           [](const Grid& g, const size_t* s, const size_t* n) {
             task_of<pthreadpool_task_6d_tile_1d_t>(g)(
                 g.context, s[0], s[1], s[2], s[3], s[4], s[5], n[5]);
           });
}

ET_PTHREADPOOL_API void pthreadpool_parallelize_6d_tile_2d(
    pthreadpool_t pool,
    pthreadpool_task_6d_tile_2d_t task,
    void* context,
    size_t range_i,
    size_t range_j,
    size_t range_k,
    size_t range_l,
    size_t range_m,
    size_t range_n,
    size_t tile_m,
    size_t tile_n,
    uint32_t flags) {
  run_grid(pool,
           task,
           context,
           flags,
           {range_i, range_j, range_k, range_l, range_m, range_n},
           {1, 1, 1, 1, tile_m, tile_n},
           [](const Grid& g, const size_t* s, const size_t* n) {
             task_of<pthreadpool_task_6d_tile_2d_t>(g)(
                 g.context, s[0], s[1], s[2], s[3], s[4], s[5], n[4], n[5]);
           });
}
