// pthreadpool's C API as this library implements it (pthreadpool_api.cpp):
// each parallelize function calls its task once per tile, with pthreadpool's
// documented arguments (the indices or tile starts of every dimension, then
// the tile sizes of the tiled ones), on a null pool, a probe and pools of
// several threads.

#include <executorch/extension/threadpool/pthreadpool_api.h>
#include <executorch/extension/threadpool/threadpool.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

#include <gtest/gtest.h>
#include <pthreadpool.h>

using executorch::extension::threadpool::make_pthreadpool;
using executorch::extension::threadpool::PthreadpoolProbe;

namespace {

using Call = std::vector<size_t>;

// The calls a task received, in any order.
struct Recorder {
  void add(Call call) {
    std::lock_guard<std::mutex> lock(mutex);
    calls[call]++;
  }
  std::mutex mutex;
  std::map<Call, int> calls;
};

Recorder& rec(void* context) {
  return *static_cast<Recorder*>(context);
}

// What pthreadpool documents for a grid: one call per tile, with the start
// (the index, untiled) of every dimension, then the size of every tiled one.
std::map<Call, int> expected_calls(const std::vector<size_t>& ranges,
                                   const std::vector<size_t>& tiles,
                                   const Call& prefix = {}) {
  std::map<Call, int> calls;
  std::vector<size_t> start(ranges.size(), 0);
  for (size_t r : ranges) {
    if (r == 0) {
      return calls;
    }
  }
  for (;;) {
    Call call = prefix;
    call.insert(call.end(), start.begin(), start.end());
    for (size_t d = 0; d < ranges.size(); ++d) {
      if (tiles[d] != 1) {
        call.push_back(std::min(tiles[d], ranges[d] - start[d]));
      }
    }
    calls[call]++;
    int d = static_cast<int>(ranges.size()) - 1;
    for (; d >= 0; --d) {
      start[d] += tiles[d];
      if (start[d] < ranges[d]) {
        break;
      }
      start[d] = 0;
    }
    if (d < 0) {
      return calls;
    }
  }
}

class PthreadpoolApiTest : public ::testing::TestWithParam<int> {
 protected:
  // 0: a null pool; -1: a probe; n > 0: a pool of n threads.
  void SetUp() override {
    if (GetParam() > 0) {
      pool_ = make_pthreadpool(GetParam());
      ASSERT_NE(pool_, nullptr);
    }
  }
  pthreadpool_t pool() const {
    if (GetParam() < 0) {
      return probe_.get();
    }
    return pool_.get();
  }
  std::shared_ptr<pthreadpool> pool_;
  PthreadpoolProbe probe_;
  Recorder r_;
};

TEST_P(PthreadpoolApiTest, ThreadCount) {
  EXPECT_EQ(pthreadpool_get_threads_count(pool()),
            static_cast<size_t>(std::max(GetParam(), 1)));
}

TEST_P(PthreadpoolApiTest, OneDimension) {
  pthreadpool_parallelize_1d(
      pool(), [](void* c, size_t i) { rec(c).add({i}); }, &r_, 37, 0);
  EXPECT_EQ(r_.calls, expected_calls({37}, {1}));
}

TEST_P(PthreadpoolApiTest, OneDimensionEmpty) {
  pthreadpool_parallelize_1d(
      pool(), [](void* c, size_t i) { rec(c).add({i}); }, &r_, 0, 0);
  EXPECT_TRUE(r_.calls.empty());
}

TEST_P(PthreadpoolApiTest, OneDimensionWithUarch) {
  pthreadpool_parallelize_1d_with_uarch(
      pool(),
      [](void* c, uint32_t u, size_t i) {
        rec(c).add({u, i});
      },
      &r_,
      3,
      5,
      21,
      0);
  EXPECT_EQ(r_.calls, expected_calls({21}, {1}, {3}));
}

TEST_P(PthreadpoolApiTest, OneDimensionTiled) {
  pthreadpool_parallelize_1d_tile_1d(
      pool(),
      [](void* c, size_t i, size_t n) {
        rec(c).add({i, n});
      },
      &r_,
      103,
      8,
      0);
  EXPECT_EQ(r_.calls, expected_calls({103}, {8}));
}

TEST_P(PthreadpoolApiTest, TwoDimensions) {
  pthreadpool_parallelize_2d(
      pool(),
      [](void* c, size_t i, size_t j) {
        rec(c).add({i, j});
      },
      &r_,
      5,
      13,
      0);
  EXPECT_EQ(r_.calls, expected_calls({5, 13}, {1, 1}));
}

TEST_P(PthreadpoolApiTest, TwoDimensionsTiledOnce) {
  pthreadpool_parallelize_2d_tile_1d(
      pool(),
      [](void* c, size_t i, size_t j, size_t nj) {
        rec(c).add({i, j, nj});
      },
      &r_,
      4,
      17,
      5,
      0);
  EXPECT_EQ(r_.calls, expected_calls({4, 17}, {1, 5}));
}

TEST_P(PthreadpoolApiTest, TwoDimensionsTiledTwice) {
  pthreadpool_parallelize_2d_tile_2d(
      pool(),
      [](void* c, size_t i, size_t j, size_t ni, size_t nj) {
        rec(c).add({i, j, ni, nj});
      },
      &r_,
      11,
      17,
      4,
      5,
      PTHREADPOOL_FLAG_DISABLE_DENORMALS);
  EXPECT_EQ(r_.calls, expected_calls({11, 17}, {4, 5}));
}

TEST_P(PthreadpoolApiTest, TwoDimensionsTiledTwiceWithUarch) {
  pthreadpool_parallelize_2d_tile_2d_with_uarch(
      pool(),
      [](void* c, uint32_t u, size_t i, size_t j, size_t ni, size_t nj) {
        rec(c).add({u, i, j, ni, nj});
      },
      &r_,
      2,
      2,
      9,
      6,
      2,
      4,
      0);
  EXPECT_EQ(r_.calls, expected_calls({9, 6}, {2, 4}, {2}));
}

TEST_P(PthreadpoolApiTest, ThreeDimensions) {
  pthreadpool_parallelize_3d(
      pool(),
      [](void* c, size_t i, size_t j, size_t k) {
        rec(c).add({i, j, k});
      },
      &r_,
      3,
      4,
      5,
      0);
  EXPECT_EQ(r_.calls, expected_calls({3, 4, 5}, {1, 1, 1}));
}

TEST_P(PthreadpoolApiTest, ThreeDimensionsTiledOnce) {
  pthreadpool_parallelize_3d_tile_1d(
      pool(),
      [](void* c, size_t i, size_t j, size_t k, size_t nk) {
        rec(c).add({i, j, k, nk});
      },
      &r_,
      3,
      4,
      11,
      3,
      0);
  EXPECT_EQ(r_.calls, expected_calls({3, 4, 11}, {1, 1, 3}));
}

TEST_P(PthreadpoolApiTest, ThreeDimensionsTiledTwice) {
  pthreadpool_parallelize_3d_tile_2d(
      pool(),
      [](void* c, size_t i, size_t j, size_t k, size_t nj, size_t nk) {
        rec(c).add({i, j, k, nj, nk});
      },
      &r_,
      3,
      7,
      11,
      2,
      3,
      0);
  EXPECT_EQ(r_.calls, expected_calls({3, 7, 11}, {1, 2, 3}));
}

TEST_P(PthreadpoolApiTest, ThreeDimensionsTiledTwiceWithUarch) {
  pthreadpool_parallelize_3d_tile_2d_with_uarch(
      pool(),
      [](void* c,
         uint32_t u,
         size_t i,
         size_t j,
         size_t k,
         size_t nj,
         size_t nk) {
        rec(c).add({u, i, j, k, nj, nk});
      },
      &r_,
      1,
      0,
      2,
      7,
      5,
      3,
      2,
      0);
  EXPECT_EQ(r_.calls, expected_calls({2, 7, 5}, {1, 3, 2}, {1}));
}

TEST_P(PthreadpoolApiTest, FourDimensions) {
  pthreadpool_parallelize_4d(
      pool(),
      [](void* c, size_t i, size_t j, size_t k, size_t l) {
        rec(c).add({i, j, k, l});
      },
      &r_,
      2,
      3,
      4,
      5,
      0);
  EXPECT_EQ(r_.calls, expected_calls({2, 3, 4, 5}, {1, 1, 1, 1}));
}

TEST_P(PthreadpoolApiTest, FourDimensionsTiledOnce) {
  pthreadpool_parallelize_4d_tile_1d(
      pool(),
      [](void* c, size_t i, size_t j, size_t k, size_t l, size_t nl) {
        rec(c).add({i, j, k, l, nl});
      },
      &r_,
      2,
      3,
      4,
      9,
      4,
      0);
  EXPECT_EQ(r_.calls, expected_calls({2, 3, 4, 9}, {1, 1, 1, 4}));
}

TEST_P(PthreadpoolApiTest, FourDimensionsTiledTwice) {
  pthreadpool_parallelize_4d_tile_2d(
      pool(),
      [](void* c,
         size_t i,
         size_t j,
         size_t k,
         size_t l,
         size_t nk,
         size_t nl) {
        rec(c).add({i, j, k, l, nk, nl});
      },
      &r_,
      2,
      3,
      7,
      9,
      3,
      4,
      0);
  EXPECT_EQ(r_.calls, expected_calls({2, 3, 7, 9}, {1, 1, 3, 4}));
}

TEST_P(PthreadpoolApiTest, FourDimensionsTiledTwiceWithUarch) {
  pthreadpool_parallelize_4d_tile_2d_with_uarch(
      pool(),
      [](void* c,
         uint32_t u,
         size_t i,
         size_t j,
         size_t k,
         size_t l,
         size_t nk,
         size_t nl) {
        rec(c).add({u, i, j, k, l, nk, nl});
      },
      &r_,
      4,
      1,
      2,
      2,
      5,
      7,
      2,
      3,
      0);
  EXPECT_EQ(r_.calls, expected_calls({2, 2, 5, 7}, {1, 1, 2, 3}, {4}));
}

TEST_P(PthreadpoolApiTest, FiveDimensions) {
  pthreadpool_parallelize_5d(
      pool(),
      [](void* c, size_t i, size_t j, size_t k, size_t l, size_t m) {
        rec(c).add({i, j, k, l, m});
      },
      &r_,
      2,
      1,
      3,
      2,
      5,
      0);
  EXPECT_EQ(r_.calls, expected_calls({2, 1, 3, 2, 5}, {1, 1, 1, 1, 1}));
}

TEST_P(PthreadpoolApiTest, FiveDimensionsTiledOnce) {
  pthreadpool_parallelize_5d_tile_1d(
      pool(),
      [](void* c, size_t i, size_t j, size_t k, size_t l, size_t m, size_t nm) {
        rec(c).add({i, j, k, l, m, nm});
      },
      &r_,
      2,
      1,
      3,
      2,
      7,
      3,
      0);
  EXPECT_EQ(r_.calls, expected_calls({2, 1, 3, 2, 7}, {1, 1, 1, 1, 3}));
}

TEST_P(PthreadpoolApiTest, FiveDimensionsTiledTwice) {
  pthreadpool_parallelize_5d_tile_2d(
      pool(),
      [](void* c,
         size_t i,
         size_t j,
         size_t k,
         size_t l,
         size_t m,
         size_t nl,
         size_t nm) {
        rec(c).add({i, j, k, l, m, nl, nm});
      },
      &r_,
      2,
      1,
      3,
      5,
      7,
      2,
      3,
      0);
  EXPECT_EQ(r_.calls, expected_calls({2, 1, 3, 5, 7}, {1, 1, 1, 2, 3}));
}

TEST_P(PthreadpoolApiTest, SixDimensions) {
  pthreadpool_parallelize_6d(
      pool(),
      [](void* c, size_t i, size_t j, size_t k, size_t l, size_t m, size_t n) {
        rec(c).add({i, j, k, l, m, n});
      },
      &r_,
      2,
      1,
      3,
      2,
      2,
      3,
      0);
  EXPECT_EQ(r_.calls, expected_calls({2, 1, 3, 2, 2, 3}, {1, 1, 1, 1, 1, 1}));
}

TEST_P(PthreadpoolApiTest, SixDimensionsTiledOnce) {
  pthreadpool_parallelize_6d_tile_1d(
      pool(),
      [](void* c,
         size_t i,
         size_t j,
         size_t k,
         size_t l,
         size_t m,
         size_t n,
         size_t nn) {
        rec(c).add({i, j, k, l, m, n, nn});
      },
      &r_,
      2,
      1,
      3,
      2,
      2,
      7,
      3,
      0);
  EXPECT_EQ(r_.calls, expected_calls({2, 1, 3, 2, 2, 7}, {1, 1, 1, 1, 1, 3}));
}

TEST_P(PthreadpoolApiTest, SixDimensionsTiledTwice) {
  pthreadpool_parallelize_6d_tile_2d(
      pool(),
      [](void* c,
         size_t i,
         size_t j,
         size_t k,
         size_t l,
         size_t m,
         size_t n,
         size_t nm,
         size_t nn) {
        rec(c).add({i, j, k, l, m, n, nm, nn});
      },
      &r_,
      2,
      1,
      3,
      2,
      5,
      7,
      2,
      3,
      0);
  EXPECT_EQ(r_.calls, expected_calls({2, 1, 3, 2, 5, 7}, {1, 1, 1, 1, 2, 3}));
}

TEST_P(PthreadpoolApiTest, TheProbeKnowsItReachedThisLibrary) {
  pthreadpool_parallelize_1d(
      pool(), [](void*, size_t) {}, nullptr, 2, 0);
  EXPECT_EQ(probe_.reached_this_library(), GetParam() < 0);
}

INSTANTIATE_TEST_SUITE_P(Pools,
                         PthreadpoolApiTest,
                         ::testing::Values(0, -1, 1, 2, 3),
                         [](const auto& info) {
                           return info.param == 0 ? std::string("null")
                                  : info.param < 0
                                      ? std::string("probe")
                                      : "threads_" + std::to_string(info.param);
                         });

TEST(PthreadpoolApi, CreateZeroMeansOneThreadPerCore) {
  pthreadpool_t pool = pthreadpool_create(0);
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pthreadpool_get_threads_count(pool),
            executorch::extension::threadpool::cores_available());
  pthreadpool_destroy(pool);
  pthreadpool_destroy(nullptr); // accepted, like pthreadpool's
}

} // namespace
