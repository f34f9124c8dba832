// The delegate's pools: with extension_threadpool built, the process
// default and the process-wide pool's own thread count give the process-wide
// pool itself (shared with the optimized kernels); other counts a pool of
// their own.

#include <gtest/gtest.h>

#include <pthreadpool.h>

#include <executorch/backends/xnnpack/runtime/huge_page_allocator.h>
#include <executorch/backends/xnnpack/runtime/threadpool.h>

#include <xnnpack.h>

#include <algorithm>

#ifdef ET_USE_THREADPOOL
#include <executorch/extension/threadpool/pthreadpool_api.h>
#include <executorch/extension/threadpool/threadpool.h>
#endif

namespace {

using executorch::backends::xnnpack::acquire_threadpool;
using executorch::backends::xnnpack::set_default_num_threads;
using executorch::backends::xnnpack::Threadpool;

#ifdef ET_USE_THREADPOOL

using executorch::extension::threadpool::get_threadpool;

// XNNPACK's operators run on our pool: its pthreadpool calls reach
// extension_threadpool's implementation (pthreadpool_api.h), not Debian's
// libpthreadpool that libXNNPACK.so links.
TEST(XnnpackThreadpoolTest, XnnpackCallsReachOurPthreadpool) {
  executorch::extension::threadpool::PthreadpoolProbe probe;
  ASSERT_EQ(executorch::backends::xnnpack::initialize_xnnpack(),
            xnn_status_success);
  float in[64];
  float out[64];
  for (int i = 0; i < 64; ++i) {
    in[i] = static_cast<float>(i - 32);
  }
  xnn_operator_t clamp = nullptr;
  ASSERT_EQ(xnn_create_clamp_nc_f32(8, 8, 8, -4.f, 4.f, 0, &clamp),
            xnn_status_success);
  ASSERT_EQ(xnn_setup_clamp_nc_f32(clamp, 8, in, out, probe.get()),
            xnn_status_success);
  ASSERT_EQ(xnn_run_operator(clamp, probe.get()), xnn_status_success);
  xnn_delete_operator(clamp);
  EXPECT_TRUE(probe.reached_this_library());
  for (int i = 0; i < 64; ++i) {
    ASSERT_EQ(out[i], std::min(4.f, std::max(-4.f, in[i])));
  }
  EXPECT_NE(acquire_threadpool(0), nullptr);
}

TEST(XnnpackThreadpoolTest, DefaultAndMatchingCountShareTheProcessPool) {
  ASSERT_TRUE(get_threadpool()->_unsafe_reset_threadpool(2));
  pthreadpool* shared = get_threadpool()->get_pthreadpool();
  EXPECT_EQ(acquire_threadpool(0).get(), shared);
  EXPECT_EQ(acquire_threadpool(2).get(), shared);
  const Threadpool three = acquire_threadpool(3);
  EXPECT_NE(three.get(), shared);
  EXPECT_EQ(pthreadpool_get_threads_count(three.get()), 3u);
  // An explicit process default for delegates is a pool of that count.
  set_default_num_threads(3);
  EXPECT_EQ(acquire_threadpool(0).get(), three.get());
  set_default_num_threads(0);
  EXPECT_EQ(acquire_threadpool(0).get(), shared);
  ASSERT_TRUE(get_threadpool()->_unsafe_reset_threadpool(0));
}

#else

TEST(XnnpackThreadpoolTest, SameCountSharesOnePool) {
  const Threadpool a = acquire_threadpool(3);
  EXPECT_EQ(acquire_threadpool(3).get(), a.get());
  EXPECT_EQ(pthreadpool_get_threads_count(a.get()), 3u);
}

#endif

} // namespace
