// parallel_for on the process-wide pool
// (<executorch/runtime/kernel/thread_parallel_interface.h>).

#include <executorch/runtime/kernel/thread_parallel_interface.h>

#include <algorithm>
#include <cinttypes>

#include <executorch/extension/threadpool/threadpool.h>
#include <executorch/extension/threadpool/threadpool_guard.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace extension {

namespace {

// The chunk this thread is running, -1 outside parallel_for. A nested
// parallel_for sees it set and runs inline: a pool worker that submitted
// to its own pool would wait for itself.
thread_local int64_t current_chunk = -1;
// What get_thread_num() returns: the running chunk's index inside
// parallel_for, what set_thread_num set outside.
thread_local int64_t thread_num = 0;
thread_local bool no_threadpool = false;

// While alive, this thread reports number `number` (its chunk's nesting is
// unchanged: an inline run of a small range does not make nested
// parallel_for calls inline).
class NumberScope {
 public:
  explicit NumberScope(int64_t number) : previous_(thread_num) {
    thread_num = number;
  }
  ~NumberScope() {
    thread_num = previous_;
  }

 private:
  const int64_t previous_;
};

// While alive, this thread runs chunk `chunk` and reports it as its number.
class ChunkScope {
 public:
  explicit ChunkScope(int64_t chunk)
      : number_(chunk), previous_chunk_(current_chunk) {
    current_chunk = chunk;
  }
  ~ChunkScope() {
    current_chunk = previous_chunk_;
  }

 private:
  const NumberScope number_;
  const int64_t previous_chunk_;
};

} // namespace

bool parallel_for(
    int64_t begin,
    int64_t end,
    int64_t grain_size,
    ::executorch::runtime::FunctionRef<void(int64_t, int64_t)> f) {
  if (begin < 0 || end < begin || grain_size <= 0) {
    ET_LOG(Error,
           "parallel_for: bad range [%" PRId64 ", %" PRId64
           ") or grain size %" PRId64,
           begin,
           end,
           grain_size);
    return false;
  }
  const int64_t items = end - begin;
  if (items == 0) {
    return true;
  }
  const int64_t threads = get_thread_count();
  const int64_t chunks =
      std::min(threads, (items + grain_size - 1) / grain_size);
  if (chunks <= 1 || current_chunk >= 0 || no_threadpool) {
    // One chunk on this thread: number 0 unless it already runs a chunk of
    // an outer call, so per-thread scratch indexed by it stays in range.
    NumberScope scope(current_chunk >= 0 ? current_chunk : 0);
    f(begin, end);
    return true;
  }
  threadpool::get_threadpool()->run(
      [&](size_t chunk) {
        const int64_t c = static_cast<int64_t>(chunk);
        ChunkScope scope(c);
        f(begin + items * c / chunks, begin + items * (c + 1) / chunks);
      },
      static_cast<size_t>(chunks));
  return true;
}

int64_t get_thread_count() {
  return static_cast<int64_t>(threadpool::get_threadpool()->get_thread_count());
}

int64_t get_thread_num() {
  return thread_num;
}

void set_thread_num(int64_t number) {
  thread_num = number;
}

namespace threadpool {

bool NoThreadPoolGuard::is_enabled() {
  return no_threadpool;
}

void NoThreadPoolGuard::set_enabled(bool enabled) {
  no_threadpool = enabled;
}

} // namespace threadpool

} // namespace extension
} // namespace executorch
