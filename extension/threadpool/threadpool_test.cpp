#include <executorch/extension/threadpool/cpuinfo_utils.h>
#include <executorch/extension/threadpool/threadpool.h>
#include <executorch/extension/threadpool/threadpool_guard.h>
#include <executorch/runtime/kernel/thread_parallel_interface.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <executorch/extension/threadpool/meeting_test_util.h>

using executorch::extension::get_thread_count;
using executorch::extension::get_thread_num;
using executorch::extension::parallel_for;
using executorch::extension::set_thread_num;
using executorch::extension::threadpool::get_threadpool;
using executorch::extension::threadpool::NoThreadPoolGuard;

using executorch::extension::threadpool::testing::in_forked_child;
using executorch::extension::threadpool::testing::Meeting;

namespace {

// How many calls a 1-D job of 64 items on `pool` makes.
int calls_of_64_items(pthreadpool* pool) {
  std::atomic<int> calls{0};
  pthreadpool_parallelize_1d(
      pool,
      [](void* context, size_t) {
        (*static_cast<std::atomic<int>*>(context))++;
      },
      &calls,
      64,
      0);
  return calls.load();
}

// Whether parallel_for runs 2 chunks on 2 threads at once.
bool two_threads_meet() {
  Meeting meeting(2);
  std::atomic<int> met{0};
  parallel_for(0, 2, 1, [&](int64_t, int64_t) { met += meeting.arrive(); });
  return met.load() == 2;
}

// Each test starts from a pool of `n` threads and restores the default.
class ThreadPoolTest : public ::testing::Test {
 protected:
  void use_threads(uint32_t n) {
    ASSERT_TRUE(get_threadpool()->_unsafe_reset_threadpool(n));
    ASSERT_EQ(get_thread_count(), n);
  }
  void TearDown() override {
    get_threadpool()->_unsafe_reset_threadpool(0);
  }
};

TEST_F(ThreadPoolTest, DefaultPoolHasOneThreadPerPerformantCore) {
  EXPECT_EQ(get_threadpool(), get_threadpool());
  EXPECT_EQ(get_threadpool()->get_thread_count(),
            executorch::extension::cpuinfo::get_num_performant_cores());
  EXPECT_LE(get_threadpool()->get_thread_count(),
            executorch::extension::threadpool::cores_available());
  EXPECT_NE(executorch::extension::threadpool::get_pthreadpool(), nullptr);
}

TEST_F(ThreadPoolTest, ADestroyedPoolRunsOnTheCallerUntilReset) {
  use_threads(2);
  std::shared_ptr<pthreadpool> held = get_threadpool()->share_pthreadpool();
  get_threadpool()->_unsafe_destroy_threadpool();
  EXPECT_EQ(get_threadpool()->get_pthreadpool(), nullptr);
  EXPECT_EQ(get_thread_count(), 1);
  const auto caller = std::this_thread::get_id();
  std::atomic<int> calls{0};
  get_threadpool()->run(
      [&](size_t) {
        EXPECT_EQ(std::this_thread::get_id(), caller);
        calls++;
      },
      100);
  EXPECT_EQ(calls.load(), 100);
  EXPECT_TRUE(parallel_for(0, 1 << 20, 1, [&](int64_t begin, int64_t end) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    EXPECT_EQ(end - begin, 1 << 20);
  }));
  // Who held the pool still has its threads.
  EXPECT_EQ(pthreadpool_get_threads_count(held.get()), 2u);
  EXPECT_EQ(calls_of_64_items(held.get()), 64);
  // A forked child keeps it destroyed.
  EXPECT_TRUE(in_forked_child(
      [] { return get_threadpool()->get_pthreadpool() == nullptr; }));
  use_threads(2);
  EXPECT_TRUE(two_threads_meet());
}

TEST_F(ThreadPoolTest, SetThreadNumNamesThreadsOutsideChunks) {
  use_threads(2);
  EXPECT_EQ(get_thread_num(), 0);
  std::thread client([] {
    set_thread_num(5);
    EXPECT_EQ(get_thread_num(), 5);
    // Chunks report their own index, and the thread's number comes back.
    int64_t in_chunk = -1;
    parallel_for(
        0, 10, 10, [&](int64_t, int64_t) { in_chunk = get_thread_num(); });
    EXPECT_EQ(in_chunk, 0);
    EXPECT_EQ(get_thread_num(), 5);
    // It does not count as inside a parallel_for: work still spreads.
    EXPECT_TRUE(two_threads_meet());
  });
  client.join();
  EXPECT_EQ(get_thread_num(), 0);
}

TEST_F(ThreadPoolTest, RunCallsEveryIndexOnce) {
  use_threads(3);
  std::vector<std::atomic<int>> calls(1000);
  get_threadpool()->run([&](size_t i) { calls[i]++; }, calls.size());
  for (auto& c : calls) {
    ASSERT_EQ(c.load(), 1);
  }
}

TEST_F(ThreadPoolTest, ParallelForCoversTheRangeInChunksOfAtLeastTheGrain) {
  use_threads(4);
  std::vector<std::atomic<int>> hits(10007);
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  ASSERT_TRUE(parallel_for(7, 10007, 1000, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      hits[i]++;
    }
    std::lock_guard<std::mutex> lock(mutex);
    chunks.emplace_back(begin, end);
  }));
  for (int64_t i = 0; i < 10007; ++i) {
    ASSERT_EQ(hits[i].load(), i >= 7 ? 1 : 0) << i;
  }
  EXPECT_EQ(chunks.size(), 4u); // one per thread
  for (auto& c : chunks) {
    EXPECT_GE(c.second - c.first, 1000);
  }
}

TEST_F(ThreadPoolTest, ChunksRunConcurrentlyWithDistinctThreadNumbers) {
  use_threads(2);
  Meeting meeting(2);
  std::atomic<bool> met{true};
  std::mutex mutex;
  std::set<int64_t> numbers;
  std::set<std::thread::id> threads;
  parallel_for(0, 2, 1, [&](int64_t, int64_t) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      numbers.insert(get_thread_num());
      threads.insert(std::this_thread::get_id());
    }
    met = meeting.arrive() && met;
  });
  EXPECT_TRUE(met);
  EXPECT_EQ(numbers, (std::set<int64_t>{0, 1}));
  EXPECT_EQ(threads.size(), 2u);
}

TEST_F(ThreadPoolTest, SmallRangesAndNestedCallsRunOnTheCallingThread) {
  use_threads(2);
  const auto caller = std::this_thread::get_id();
  int calls = 0;
  parallel_for(0, 100, 100, [&](int64_t begin, int64_t end) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    EXPECT_EQ(end - begin, 100);
    ++calls;
  });
  EXPECT_EQ(calls, 1);

  std::atomic<int> inner_calls{0};
  parallel_for(0, 2, 1, [&](int64_t, int64_t) {
    const auto outer_thread = std::this_thread::get_id();
    const int64_t outer_number = get_thread_num();
    parallel_for(0, 1000, 1, [&](int64_t begin, int64_t end) {
      EXPECT_EQ(std::this_thread::get_id(), outer_thread);
      EXPECT_EQ(get_thread_num(), outer_number);
      EXPECT_EQ(end - begin, 1000);
      inner_calls++;
    });
  });
  EXPECT_EQ(inner_calls.load(), 2);
}

TEST_F(ThreadPoolTest, NoThreadPoolGuardKeepsWorkOnTheCallingThread) {
  use_threads(2);
  const auto caller = std::this_thread::get_id();
  {
    NoThreadPoolGuard guard;
    EXPECT_TRUE(NoThreadPoolGuard::is_enabled());
    int calls = 0;
    parallel_for(0, 1 << 20, 1, [&](int64_t begin, int64_t end) {
      EXPECT_EQ(std::this_thread::get_id(), caller);
      EXPECT_EQ(end - begin, 1 << 20);
      ++calls;
    });
    EXPECT_EQ(calls, 1);
  }
  EXPECT_FALSE(NoThreadPoolGuard::is_enabled());
}

TEST_F(ThreadPoolTest, BadArgumentsRunNothing) {
  int calls = 0;
  auto count = [&](int64_t, int64_t) { ++calls; };
  EXPECT_FALSE(parallel_for(-1, 10, 1, count));
  EXPECT_FALSE(parallel_for(10, 5, 1, count));
  EXPECT_FALSE(parallel_for(0, 10, 0, count));
  EXPECT_TRUE(parallel_for(5, 5, 1, count));
  EXPECT_EQ(calls, 0);
}

TEST_F(ThreadPoolTest, ResetKeepsASharedOldPoolWorking) {
  use_threads(2);
  std::shared_ptr<pthreadpool> old_pool = get_threadpool()->share_pthreadpool();
  use_threads(3);
  EXPECT_NE(get_threadpool()->get_pthreadpool(), old_pool.get());
  EXPECT_EQ(pthreadpool_get_threads_count(old_pool.get()), 2u);
  EXPECT_EQ(calls_of_64_items(old_pool.get()), 64);
}

TEST_F(ThreadPoolTest, AForkedChildGetsAPoolWithThreadsOfItsOwn) {
  use_threads(2);
  ASSERT_TRUE(two_threads_meet());
  std::shared_ptr<pthreadpool> parents = get_threadpool()->share_pthreadpool();
  EXPECT_TRUE(in_forked_child([&] {
    // The parent's pool still runs work, on this thread alone.
    const bool ran = calls_of_64_items(parents.get()) == 64;
    const bool replaced = get_threadpool()->get_pthreadpool() != parents.get();
    parents.reset();
    return ran && replaced && get_threadpool()->get_thread_count() == 2 &&
           two_threads_meet() &&
           get_threadpool()->_unsafe_reset_threadpool(1) &&
           get_threadpool()->_unsafe_reset_threadpool(2) && two_threads_meet();
  }));
  EXPECT_EQ(get_threadpool()->get_pthreadpool(), parents.get());
  EXPECT_TRUE(two_threads_meet());
}

TEST_F(ThreadPoolTest, ResetToTheSameCountKeepsThePool) {
  use_threads(2);
  pthreadpool* before = get_threadpool()->get_pthreadpool();
  use_threads(2);
  EXPECT_EQ(get_threadpool()->get_pthreadpool(), before);
  EXPECT_EQ(get_threadpool()->get_thread_count(), 2u);
}

} // namespace
