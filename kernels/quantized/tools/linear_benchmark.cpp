// quantized_linear_benchmark: speed of the dynamic int8 linear
// (et_quantized::dynamic_int8_linear_panels's loops, quantized_linear.h) on the
// linears of two models, per instruction set the CPU has:
//   minilm: all-MiniLM-L6-v2's 36 linears on 128 tokens, 8-bit weights per
//     channel, activations per tensor (PT2E dynamic quantization);
//   llm-prefill / llm-decode: the 85 linears of benchmarks/llm_benchmark.py's
//     124.7M Llama shape (dim 768, 12 layers, 4 KV heads, SwiGLU 2048,
//     vocab 32000), 4-bit weights in groups of 128 with 8-bit per-token
//     activations (8da4w), on 64 tokens and on one.
// Every model's weights are distinct buffers (~50 MB for the LLM), so a
// decode streams them from memory as a real one does.
//
//   quantized_linear_benchmark [--quick] [--threads N] [--model NAME]
//
// (--model: that model only, e.g. llm-decode.)
//
// Per model and instruction set: milliseconds of this thread's CPU time
// per forward on one thread (best of several; a shared machine's waits do
// not count), multiply-adds per second and weight bytes streamed per
// second; then, with the instruction set the kernels pick, wall and
// process CPU milliseconds on N pool threads (default 2). Includes the
// activations' quantization, as the operator runs it. A benchmark, not a
// test (its smoke run checks that it reports).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include <executorch/extension/threadpool/threadpool.h>
#include <executorch/kernels/quantized/cpu/quantized_linear.h>

namespace q = torch::executor::native::quantized;

namespace {

double seconds(clockid_t clock) {
  timespec t;
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct Shape {
  int64_t k, n;
};

struct Layer {
  std::vector<uint8_t> data;
  std::vector<float> scales;
  q::PackedWeights w;
};

struct Model {
  const char* name;
  int64_t tokens;
  bool per_token;
  std::vector<Layer> layers;
  std::vector<float> x; // tokens x largest K
  std::vector<float> y; // tokens x largest N
  std::vector<int8_t> xq;
  std::vector<float> x_scales;
  std::vector<int32_t> x_zero_points;
  std::vector<uint8_t> scratch;
};

Model make_model(const char* name,
                 int64_t tokens,
                 bool per_token,
                 int bits,
                 int64_t group,
                 const std::vector<Shape>& shapes) {
  std::mt19937 rng(7);
  Model model{name, tokens, per_token, {}, {}, {}, {}, {}, {}, {}};
  int64_t widest = 0, tallest = 0;
  size_t scratch = 0;
  model.layers.reserve(shapes.size());
  for (const Shape& s : shapes) {
    Layer layer;
    const int64_t g = group > 0 ? group : s.k;
    layer.data.resize(s.n * (bits == 4 ? s.k / 2 : s.k));
    for (auto& b : layer.data) {
      b = static_cast<uint8_t>(rng());
    }
    layer.scales.assign(s.n * (s.k / g), 0.01f);
    layer.w = q::PackedWeights{
        layer.data.data(), bits, s.n, s.k, g, layer.scales.data(), nullptr};
    widest = std::max(widest, s.k);
    tallest = std::max(tallest, s.n);
    model.layers.push_back(std::move(layer));
  }
  model.x.resize(tokens * widest);
  std::normal_distribution<float> normal;
  for (auto& v : model.x) {
    v = normal(rng);
  }
  model.y.resize(tokens * tallest);
  model.xq.resize(tokens * widest);
  model.x_scales.resize(tokens);
  model.x_zero_points.resize(tokens);
  return model;
}

// One forward: every linear on the same input (its first K columns).
void forward(Model& m) {
  for (Layer& layer : m.layers) {
    const q::PackedWeights& w = layer.w;
    const size_t need = q::dynamic_scratch_bytes(w, m.tokens) + 64;
    if (m.scratch.size() < need) {
      m.scratch.resize(need);
    }
    void* scratch =
        m.scratch.data() +
        (64 - reinterpret_cast<uintptr_t>(m.scratch.data()) % 64) % 64;
    const int64_t rows = m.per_token ? m.tokens : 1;
    const int64_t span = m.per_token ? w.cols : w.cols * m.tokens;
    for (int64_t r = 0; r < rows; ++r) {
      float lo = 0.f, hi = 0.f;
      q::find_min_max(m.x.data() + r * span, span, &lo, &hi);
      const float scale =
          std::max((std::max(hi, 0.f) - std::min(lo, 0.f)) / 255.f, 1e-6f);
      const int32_t zp = std::min(
          127,
          std::max(-128,
                   -128 - static_cast<int32_t>(
                              std::nearbyint(std::min(lo, 0.f) / scale))));
      q::quantize_int8(m.x.data() + r * span,
                       span,
                       1.f / scale,
                       zp,
                       -128,
                       127,
                       m.xq.data() + r * span);
      for (int64_t t = m.per_token ? r : 0;
           t < (m.per_token ? r + 1 : m.tokens);
           ++t) {
        m.x_scales[t] = scale;
        m.x_zero_points[t] = zp;
      }
    }
    q::linear_dynamic(
        q::QuantizedRows{
            m.xq.data(), m.x_scales.data(), m.x_zero_points.data(), m.tokens},
        w,
        nullptr,
        m.y.data(),
        scratch);
  }
}

double macs(const Model& m) {
  double total = 0;
  for (const Layer& l : m.layers) {
    total += static_cast<double>(l.w.rows) * l.w.cols * m.tokens;
  }
  return total;
}

double weight_bytes(const Model& m) {
  double total = 0;
  for (const Layer& l : m.layers) {
    total += l.data.size() + l.scales.size() * sizeof(float);
  }
  return total;
}

// Best per-forward time over `rounds` rounds of `iterations` forwards.
double best_ms(Model& m, clockid_t clock, int rounds, int iterations) {
  forward(m); // warm-up: scratch, page faults
  double best = 1e30;
  for (int r = 0; r < rounds; ++r) {
    const double start = seconds(clock);
    for (int i = 0; i < iterations; ++i) {
      forward(m);
    }
    best = std::min(best, (seconds(clock) - start) / iterations);
  }
  return best * 1e3;
}

const char* isa_name(q::Isa isa) {
  return isa == q::Isa::kAvx512Vnni
             ? "avx512-vnni"
             : (isa == q::Isa::kAvx2 ? "avx2" : "portable");
}

} // namespace

int main(int argc, char** argv) {
  bool quick = false;
  uint32_t threads = 2;
  const char* only = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = static_cast<uint32_t>(std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--model") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: %s [--quick] [--threads N] [--model NAME]\n",
                   argv[0]);
      return 2;
    }
  }
  // The two models' linears; --quick: one layer each, a small vocabulary.
  const int layers = quick ? 1 : 12, minilm_layers = quick ? 1 : 6;
  std::vector<Shape> llm, minilm;
  for (int l = 0; l < layers; ++l) {
    for (Shape s : {Shape{768, 768},
                    Shape{768, 256},
                    Shape{768, 256},
                    Shape{768, 768},
                    Shape{768, 2048},
                    Shape{768, 2048},
                    Shape{2048, 768}}) {
      llm.push_back(s);
    }
  }
  llm.push_back(Shape{768, quick ? 512 : 32000});
  for (int l = 0; l < minilm_layers; ++l) {
    for (Shape s : {Shape{384, 384},
                    Shape{384, 384},
                    Shape{384, 384},
                    Shape{384, 384},
                    Shape{384, 1536},
                    Shape{1536, 384}}) {
      minilm.push_back(s);
    }
  }
  std::vector<Model> models;
  const auto wanted = [&](const char* name) {
    return only == nullptr || std::strcmp(only, name) == 0;
  };
  if (wanted("minilm")) {
    models.push_back(make_model("minilm", 128, false, 8, 0, minilm));
  }
  if (wanted("llm-prefill")) {
    models.push_back(make_model("llm-prefill", 64, true, 4, 128, llm));
  }
  if (wanted("llm-decode")) {
    models.push_back(make_model("llm-decode", 1, true, 4, 128, llm));
  }
  if (models.empty()) {
    std::fprintf(stderr,
                 "--model must be minilm, llm-prefill or llm-decode, got %s\n",
                 only);
    return 2;
  }

  auto* pool = ::executorch::extension::threadpool::get_threadpool();
  const int rounds = quick ? 1 : 5;
  std::printf("%-12s %-12s %8s %10s %10s  (1 thread, thread CPU time)\n",
              "model",
              "isa",
              "ms",
              "GMAC/s",
              "GB/s");
  pool->_unsafe_reset_threadpool(1);
  for (Model& m : models) {
    const int iterations = quick ? 1 : (m.tokens == 1 ? 20 : 3);
    for (q::Isa isa : {q::Isa::kAvx512Vnni, q::Isa::kAvx2, q::Isa::kPortable}) {
      q::set_isa_limit(isa);
      if (q::best_isa() != isa) {
        continue;
      }
      const double ms = best_ms(m, CLOCK_THREAD_CPUTIME_ID, rounds, iterations);
      std::printf("%-12s %-12s %8.3f %10.2f %10.2f\n",
                  m.name,
                  isa_name(isa),
                  ms,
                  macs(m) / ms * 1e-6,
                  weight_bytes(m) / ms * 1e-6);
    }
  }
  q::set_isa_limit(q::Isa::kAvx512Vnni);
  pool->_unsafe_reset_threadpool(threads);
  std::printf("\n%-12s %-12s %8s %10s  (%u threads, %s)\n",
              "model",
              "isa",
              "wall ms",
              "cpu ms",
              threads,
              isa_name(q::best_isa()));
  for (Model& m : models) {
    const int iterations = quick ? 1 : (m.tokens == 1 ? 20 : 3);
    const double wall = best_ms(m, CLOCK_MONOTONIC, rounds, iterations);
    const double cpu = best_ms(m, CLOCK_PROCESS_CPUTIME_ID, rounds, iterations);
    std::printf("%-12s %-12s %8.3f %10.3f\n",
                m.name,
                isa_name(q::best_isa()),
                wall,
                cpu);
  }
  return 0;
}
