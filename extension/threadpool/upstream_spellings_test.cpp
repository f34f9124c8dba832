// A client written against upstream ExecuTorch's thread pool API, in the
// spellings its runners and custom kernels use (the current namespaces and
// the deprecated torch:: ones): it compiles against these headers and runs
// on this pool.

#include <executorch/extension/threadpool/cpuinfo_utils.h>
#include <executorch/extension/threadpool/threadpool.h>
#include <executorch/extension/threadpool/threadpool_guard.h>
#include <executorch/runtime/kernel/thread_parallel_interface.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>
#include <pthreadpool.h>

namespace {

TEST(UpstreamSpellings, RunnerSizesThePoolToThePerformantCores) {
  // What upstream's LLM runner does at start-up.
  const uint32_t cores =
      ::executorch::extension::cpuinfo::get_num_performant_cores();
  ASSERT_TRUE(::executorch::extension::threadpool::get_threadpool()
                  ->_unsafe_reset_threadpool(cores));
  EXPECT_EQ(
      ::executorch::extension::threadpool::get_threadpool()->get_thread_count(),
      cores);
  EXPECT_EQ(torch::executorch::cpuinfo::get_num_performant_cores(), cores);
  pthreadpool_t pool = ::executorch::extension::threadpool::get_pthreadpool();
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pthreadpool_get_threads_count(pool), cores);
}

TEST(UpstreamSpellings, DeprecatedNamespacesReachTheSamePool) {
  torch::executorch::threadpool::ThreadPool* pool =
      torch::executorch::threadpool::get_threadpool();
  EXPECT_EQ(pool, ::executorch::extension::threadpool::get_threadpool());
  EXPECT_EQ(torch::executorch::threadpool::get_pthreadpool(),
            pool->get_pthreadpool());
}

TEST(UpstreamSpellings, CustomKernelLoopsWithTheDefaultGrain) {
  ASSERT_TRUE(::executorch::extension::threadpool::get_threadpool()
                  ->_unsafe_reset_threadpool(2));
  const int64_t n = 4 * ::executorch::extension::internal::GRAIN_SIZE + 3;
  std::vector<float> out(n, 0.f);
  std::atomic<int> chunks{0};
  ASSERT_TRUE(torch::executor::parallel_for(
      0,
      n,
      ::executorch::extension::internal::GRAIN_SIZE,
      [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          out[i] = static_cast<float>(i);
        }
        chunks++;
      }));
  EXPECT_EQ(chunks.load(), 2); // one per thread
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(out[i], static_cast<float>(i));
  }
  torch::executor::set_thread_num(1);
  EXPECT_EQ(torch::executor::get_thread_num(), 1);
  torch::executor::set_thread_num(0);
}

TEST(UpstreamSpellings, GuardAndDestroyAsUpstreamSpellsThem) {
  {
    torch::executorch::threadpool::NoThreadPoolGuard guard;
    EXPECT_TRUE(
        ::executorch::extension::threadpool::NoThreadPoolGuard::is_enabled());
  }
  auto* pool = ::executorch::extension::threadpool::get_threadpool();
  pool->_unsafe_destroy_threadpool();
  EXPECT_EQ(pool->get_thread_count(), 1u);
  std::atomic<int> calls{0};
  pool->run([&](size_t) { calls++; }, 10);
  EXPECT_EQ(calls.load(), 10);
  ASSERT_TRUE(pool->_unsafe_reset_threadpool(0));
  EXPECT_EQ(pool->get_thread_count(),
            ::executorch::extension::cpuinfo::get_num_performant_cores());
}

} // namespace
