#include <executorch/extension/threadpool/worker_pool.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <executorch/extension/threadpool/meeting_test_util.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

using executorch::extension::threadpool::WorkerPool;

using executorch::extension::threadpool::testing::in_forked_child;
using executorch::extension::threadpool::testing::Meeting;

namespace {

// Counts the calls of every item.
struct Coverage {
  explicit Coverage(size_t items) : hits(items) {}
  static void chunk(void* context, size_t begin, size_t end) {
    auto* self = static_cast<Coverage*>(context);
    for (size_t i = begin; i < end; ++i) {
      self->hits[i]++;
    }
  }
  bool each_once() const {
    for (const auto& h : hits) {
      if (h.load() != 1) {
        return false;
      }
    }
    return true;
  }
  std::vector<std::atomic<int>> hits;
};

// Whether `pool` runs a job of 3 one-item chunks on 3 threads at once.
bool three_threads_meet(WorkerPool& pool) {
  Meeting meeting(3);
  std::atomic<int> met{0};
  struct Context {
    Meeting* meeting;
    std::atomic<int>* met;
  } context{&meeting, &met};
  pool.run(
      [](void* c, size_t begin, size_t end) {
        auto* ctx = static_cast<Context*>(c);
        for (size_t i = begin; i < end; ++i) {
          *ctx->met += ctx->meeting->arrive() ? 1 : 0;
        }
      },
      &context,
      3,
      0);
  return met.load() == 3;
}

// Both spin settings: workers that spin for the next job, and workers that
// sleep right away (each job wakes them).
class WorkerPoolTest : public ::testing::TestWithParam<int64_t> {
 protected:
  std::chrono::microseconds spin() const {
    return std::chrono::microseconds(GetParam());
  }
};

TEST_P(WorkerPoolTest, EveryItemRunsOnceForAnySizeAndThreadCount) {
  for (size_t threads : {1, 2, 3, 5}) {
    auto pool = WorkerPool::create(threads, spin());
    ASSERT_NE(pool, nullptr);
    EXPECT_EQ(pool->threads(), threads);
    for (size_t items : {0, 1, 2, 3, 7, 64, 1000, 100003}) {
      Coverage coverage(items);
      pool->run(Coverage::chunk, &coverage, items, 0);
      EXPECT_TRUE(coverage.each_once())
          << threads << " threads, " << items << " items";
    }
  }
}

TEST_P(WorkerPoolTest, WorkersRunChunksAlongsideTheCaller) {
  auto pool = WorkerPool::create(3, spin());
  // Three items, one chunk each: they can only all be inside at once if
  // both workers took one.
  for (int round = 0; round < 20; ++round) {
    ASSERT_TRUE(three_threads_meet(*pool)) << "round " << round;
  }
}

TEST_P(WorkerPoolTest, ManyShortJobsInARow) {
  auto pool = WorkerPool::create(2, spin());
  for (int job = 0; job < 5000; ++job) {
    Coverage coverage(2 + job % 7);
    pool->run(Coverage::chunk,
              &coverage,
              coverage.hits.size(),
              job % 3 == 0 ? WorkerPool::kYieldWorkers : 0);
    ASSERT_TRUE(coverage.each_once()) << "job " << job;
  }
}

TEST_P(WorkerPoolTest, CallsFromSeveralThreadsRunOneAfterTheOther) {
  auto pool = WorkerPool::create(2, spin());
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int job = 0; job < 200; ++job) {
        Coverage coverage(100);
        pool->run(Coverage::chunk, &coverage, 100, 0);
        failures += coverage.each_once() ? 0 : 1;
      }
    });
  }
  for (auto& t : callers) {
    t.join();
  }
  EXPECT_EQ(failures.load(), 0);
}

TEST_P(WorkerPoolTest, EachThreadStartsOnItsOwnShareOfTheItems) {
  // 3 threads, 12 items: the caller's share is [0, 4), the workers' [4, 8)
  // and [8, 12). Each thread's first chunk waits until all three are inside
  // one, so nobody can finish its share and take from another's first.
  auto pool = WorkerPool::create(3, spin());
  for (int round = 0; round < 20; ++round) {
    struct Context {
      Meeting meeting{3};
      std::thread::id caller = std::this_thread::get_id();
      std::mutex mutex;
      std::vector<std::thread::id> started; // threads past their first chunk
      std::vector<size_t> first_items;
      size_t caller_first_item = 99;
      std::atomic<int> met{0};
    } context;
    pool->run(
        [](void* c, size_t begin, size_t) {
          auto* ctx = static_cast<Context*>(c);
          const auto self = std::this_thread::get_id();
          {
            std::lock_guard<std::mutex> lock(ctx->mutex);
            for (const auto& id : ctx->started) {
              if (id == self) {
                return;
              }
            }
            ctx->started.push_back(self);
            ctx->first_items.push_back(begin);
            if (self == ctx->caller) {
              ctx->caller_first_item = begin;
            }
          }
          ctx->met += ctx->meeting.arrive() ? 1 : 0;
        },
        &context,
        12,
        0);
    ASSERT_EQ(context.met.load(), 3) << "round " << round;
    std::sort(context.first_items.begin(), context.first_items.end());
    EXPECT_EQ(context.first_items, (std::vector<size_t>{0, 4, 8}))
        << "round " << round;
    EXPECT_EQ(context.caller_first_item, 0u) << "round " << round;
  }
}

TEST_P(WorkerPoolTest, RunFromInsideAChunkRunsOnThatThread) {
  auto pool = WorkerPool::create(2, spin());
  struct Context {
    WorkerPool* pool;
    std::atomic<int> inner_items{0};
    std::atomic<int> inner_on_other_thread{0};
  } context{pool.get()};
  pool->run(
      [](void* c, size_t begin, size_t end) {
        auto* ctx = static_cast<Context*>(c);
        for (size_t i = begin; i < end; ++i) {
          struct Inner {
            Context* ctx;
            std::thread::id outer;
          } inner{ctx, std::this_thread::get_id()};
          ctx->pool->run(
              [](void* c2, size_t b, size_t e) {
                auto* in = static_cast<Inner*>(c2);
                in->ctx->inner_items += static_cast<int>(e - b);
                in->ctx->inner_on_other_thread +=
                    std::this_thread::get_id() != in->outer ? 1 : 0;
              },
              &inner,
              10,
              0);
        }
      },
      &context,
      4,
      0);
  EXPECT_EQ(context.inner_items.load(), 40); // and no deadlock
  EXPECT_EQ(context.inner_on_other_thread.load(), 0);
}

TEST_P(WorkerPoolTest, DestroyingStopsSpinningAndSleepingWorkers) {
  for (int i = 0; i < 50; ++i) {
    auto pool = WorkerPool::create(3, spin());
    if (i % 2 == 0) {
      Coverage coverage(10);
      pool->run(Coverage::chunk, &coverage, 10, 0);
    }
  } // each destructor returns: the test would hang otherwise
}

TEST_P(WorkerPoolTest, AForkedChildRunsJobsOnTheCallerAndDropsThePool) {
  auto pool = WorkerPool::create(3, spin());
  Coverage warm(64);
  pool->run(Coverage::chunk, &warm, 64, 0); // workers now spin or sleep
  EXPECT_TRUE(in_forked_child([&] {
    if (!pool->orphaned() || pool->threads() != 1) {
      return false;
    }
    struct Context {
      Coverage coverage{1000};
      std::thread::id caller = std::this_thread::get_id();
      std::atomic<int> elsewhere{0};
    } context;
    pool->run(
        [](void* c, size_t begin, size_t end) {
          auto* ctx = static_cast<Context*>(c);
          ctx->elsewhere += std::this_thread::get_id() != ctx->caller;
          Coverage::chunk(&ctx->coverage, begin, end);
        },
        &context,
        1000,
        0);
    pool.reset(); // returns: it neither joins nor wakes the parent's workers
    auto fresh = WorkerPool::create(3, spin());
    return context.coverage.each_once() && context.elsewhere.load() == 0 &&
           fresh != nullptr && !fresh->orphaned() && three_threads_meet(*fresh);
  }));
  EXPECT_FALSE(pool->orphaned());
  EXPECT_TRUE(three_threads_meet(*pool));
}

#if defined(__x86_64__) || defined(__i386__)
TEST_P(WorkerPoolTest, DisableDenormalsAppliesOnEveryThreadAndIsRestored) {
  auto pool = WorkerPool::create(2, spin());
  const unsigned before = _mm_getcsr();
  std::atomic<int> flushing{0};
  std::atomic<int> chunks{0};
  struct Context {
    std::atomic<int>* flushing;
    std::atomic<int>* chunks;
    Meeting meeting{2};
  } context{&flushing, &chunks};
  pool->run(
      [](void* c, size_t begin, size_t end) {
        auto* ctx = static_cast<Context*>(c);
        for (size_t i = begin; i < end; ++i) {
          ctx->meeting.arrive(); // one item on each thread
          *ctx->chunks += 1;
          *ctx->flushing += (_mm_getcsr() & 0x8040) == 0x8040 ? 1 : 0;
        }
      },
      &context,
      2,
      WorkerPool::kDisableDenormals);
  EXPECT_EQ(chunks.load(), 2);
  EXPECT_EQ(flushing.load(), 2);
  EXPECT_EQ(_mm_getcsr(), before);
  // Without the flag nothing changes.
  Coverage coverage(4);
  pool->run(
      [](void* c, size_t begin, size_t end) {
        if ((_mm_getcsr() & 0x8040) != 0) {
          return; // leaves the items uncounted
        }
        Coverage::chunk(c, begin, end);
      },
      &coverage,
      4,
      0);
  EXPECT_TRUE(coverage.each_once());
}
#endif

INSTANTIATE_TEST_SUITE_P(Spin,
                         WorkerPoolTest,
                         ::testing::Values(0, 100),
                         [](const auto& info) {
                           return "spin_" + std::to_string(info.param) + "us";
                         });

} // namespace
