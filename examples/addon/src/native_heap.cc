// Planted bugs in memory the addon allocates itself (malloc, calloc,
// realloc, new[], std::vector), for `--native '*buggy_addon.node'`; and
// correct code that uses the heap heavily, from several threads, and frees
// memory libc allocated on its behalf.
#include <napi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "native_heap.h"

namespace {

// Out of line and volatile, so each planted access stays where it is.
__attribute__((noinline)) void StoreByte(uint8_t* p, ptrdiff_t i, uint8_t v) {
  reinterpret_cast<volatile uint8_t*>(p)[i] = v;
}

// Hides a pointer from the optimizer, which would otherwise drop a
// malloc/free pair whose memory is never used (and a planted double free).
template <typename T>
T* Opaque(T* p) {
  asm volatile("" : "+r"(p));
  return p;
}

// Bug: `<=` writes one byte past a 64-byte malloc.
__attribute__((noinline)) void MallocOverflow() {
  auto* p = static_cast<uint8_t*>(malloc(64));
  for (int i = 0; i <= 64; i++) StoreByte(p, i, 0x41);
  free(p);
}

// Bug: 16 x 4 bytes, written as 65.
__attribute__((noinline)) void CallocOverflow() {
  auto* p = static_cast<uint8_t*>(calloc(16, 4));
  StoreByte(p, 64, 0x42);
  free(p);
}

// Bug: grown to 64 bytes, written at 64.
__attribute__((noinline)) void ReallocOverflow() {
  auto* p = static_cast<uint8_t*>(malloc(32));
  p = static_cast<uint8_t*>(realloc(p, 64));
  StoreByte(p, 64, 0x43);
  free(p);
}

// Bug: new[64], written at 64.
__attribute__((noinline)) void NewArrayOverflow() {
  auto* p = new uint8_t[64];
  StoreByte(p, 64, 0x44);
  delete[] p;
}

// Bug: a vector of 64 bytes, written at 64 through data().
__attribute__((noinline)) void VectorOverflow() {
  std::vector<uint8_t> v(64);
  StoreByte(v.data(), static_cast<ptrdiff_t>(v.size()), 0x45);
}

// Bug: one byte before a 64-byte malloc.
__attribute__((noinline)) void MallocUnderflow() {
  auto* p = static_cast<uint8_t*>(malloc(64));
  StoreByte(p, -1, 0x46);
  free(p);
}

// Bug: writes through the pointer after free.
__attribute__((noinline)) void UseAfterFree() {
  auto* p = static_cast<uint8_t*>(malloc(64));
  free(p);
  StoreByte(p, 0, 0x47);
}

// Bug: frees twice.
__attribute__((noinline)) void DoubleFree() {
  void* p = Opaque(malloc(64));
  free(p);
  free(Opaque(p));
}

// Bug: frees a pointer into the middle of an allocation.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wfree-nonheap-object"
__attribute__((noinline)) void InvalidFree() {
  auto* p = Opaque(static_cast<uint8_t*>(malloc(64)));
  free(Opaque(p + 8));
  free(p);
}
#pragma GCC diagnostic pop

// Correct: n malloc+free pairs of `size` bytes (exactly n allocations).
__attribute__((noinline)) uint64_t Churn(uint32_t n, size_t size) {
  uint64_t sum = 0;
  for (uint32_t i = 0; i < n; i++) {
    auto* p = Opaque(static_cast<uint8_t*>(malloc(size)));
    p[0] = static_cast<uint8_t>(i);
    p[size - 1] = 1;
    sum += p[0] + p[size - 1];
    free(p);
  }
  return sum;
}

// Correct: one of each allocation form; returns how many allocations it
// made (Opaque keeps the optimizer from eliding any of them).
__attribute__((noinline)) uint32_t EveryForm() {
  uint32_t made = 0;
  void* a = Opaque(malloc(10));
  made++;
  void* b = Opaque(calloc(3, 7));
  made++;
  b = Opaque(realloc(b, 100));
  made++;  // a new block (the old one is freed)
  void* c = nullptr;
  if (posix_memalign(&c, 64, 40) == 0) made++;
  c = Opaque(c);
  void* d = Opaque(aligned_alloc(256, 512));
  made++;
  char* e = Opaque(strdup("mate-guard"));
  made++;
  char* f = Opaque(strndup("mate-guard", 4));
  made++;
  int* g = Opaque(new int[5]);
  made++;
  auto* h = Opaque(new std::vector<double>(8));
  made += 2;  // the vector and its buffer
  bool ok = reinterpret_cast<uintptr_t>(c) % 64 == 0 && reinterpret_cast<uintptr_t>(d) % 256 == 0 &&
            strcmp(f, "mate") == 0 && strcmp(e, "mate-guard") == 0 && h->size() == 8;
  free(a);
  free(b);
  free(c);
  free(d);
  free(e);
  free(f);
  delete[] g;
  delete h;
  return ok ? made : 0;
}

// Correct: memory libc allocates for the module (getline, asprintf,
// realpath, open_memstream), freed by the module: those frees must reach
// libc untouched.
__attribute__((noinline)) size_t LibcOwned() {
  size_t total = 0;
  char text[] = "first line\nsecond line\n";
  FILE* in = fmemopen(text, strlen(text), "r");
  char* line = nullptr;
  size_t cap = 0;
  ssize_t n;
  while ((n = getline(&line, &cap, in)) > 0) total += static_cast<size_t>(n);
  free(line);
  fclose(in);
  char* formatted = nullptr;
  if (asprintf(&formatted, "%d-%s", 42, "x") > 0) total += strlen(formatted);
  free(formatted);
  char* real = realpath(".", nullptr);
  if (real) total += strlen(real) > 0;
  free(real);
  char* buf = nullptr;
  size_t len = 0;
  FILE* out = open_memstream(&buf, &len);
  fprintf(out, "%s", "memstream");
  fclose(out);
  total += len;
  free(buf);
  return total;
}

// Correct: the addon's own threads allocate and free, and free each
// other's blocks.
__attribute__((noinline)) uint64_t Threads(uint32_t threads, uint32_t n) {
  std::vector<std::thread> pool;
  std::vector<std::vector<void*>> handoff(threads);
  for (uint32_t t = 0; t < threads; t++)
    pool.emplace_back([t, n, &handoff] {
      for (uint32_t i = 0; i < n; i++) free(Opaque(malloc(16 + (i % 200))));
      for (uint32_t i = 0; i < 64; i++) handoff[t].push_back(malloc(48));
    });
  for (auto& th : pool) th.join();
  pool.clear();
  for (uint32_t t = 0; t < threads; t++)
    pool.emplace_back([t, threads, &handoff] {
      for (void* p : handoff[(t + 1) % threads]) free(p);  // allocated on another thread
    });
  for (auto& th : pool) th.join();
  return static_cast<uint64_t>(threads) * n;
}

// Correct, for the native heap bench: `threads` threads at once, each
// making n malloc+free pairs of `size` bytes (threads * n allocations).
__attribute__((noinline)) uint64_t ChurnThreads(uint32_t threads, uint32_t n, size_t size) {
  std::vector<std::thread> pool;
  std::vector<uint64_t> sums(threads);
  for (uint32_t t = 0; t < threads; t++) pool.emplace_back([t, n, size, &sums] { sums[t] = Churn(n, size); });
  for (auto& th : pool) th.join();
  uint64_t sum = 0;
  for (uint64_t s : sums) sum += s;
  return sum;
}

// Correct: an error path that throws, then allocates and frees before it
// returns (as building an error message does); the exception must still
// reach the JS caller.
Napi::Value ThrowThenAllocate(const Napi::CallbackInfo& info) {
  Napi::Error::New(info.Env(), "thrown by the addon").ThrowAsJavaScriptException();
  free(Opaque(malloc(48)));
  return info.Env().Undefined();
}

// Planted double frees on both sides of a call back into JS (the callback
// may call the addon again): each allocation's JS stack is this call's
// caller, whatever ran in between.
Napi::Value DoubleFreesAround(const Napi::CallbackInfo& info) {
  DoubleFree();
  if (info.Length() > 0 && info[0].IsFunction()) info[0].As<Napi::Function>().Call({});
  DoubleFree();
  return info.Env().Undefined();
}

// Allocates on a libuv pool thread, frees on the main thread; with
// `overflow`, writes one byte past the end on the pool thread.
class PoolWorker : public Napi::AsyncWorker {
 public:
  PoolWorker(Napi::Function cb, bool overflow) : Napi::AsyncWorker(cb), overflow_(overflow) {}
  void Execute() override {
    block_ = static_cast<uint8_t*>(malloc(128));
    for (int i = 0; i < 128 + (overflow_ ? 1 : 0); i++) StoreByte(block_, i, 0x48);
  }
  void OnOK() override {
    free(block_);
    Callback().Call({Env().Null()});
  }

 private:
  bool overflow_;
  uint8_t* block_ = nullptr;
};

uint32_t Arg(const Napi::CallbackInfo& info, size_t i, uint32_t fallback) {
  return info.Length() > i && info[i].IsNumber() ? info[i].As<Napi::Number>().Uint32Value() : fallback;
}

Napi::Value Call(const Napi::CallbackInfo& info, void (*fn)()) {
  fn();
  return info.Env().Undefined();
}

}  // namespace

void InitNativeHeap(Napi::Env env, Napi::Object exports) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("mallocOverflow",
        Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Call(i, MallocOverflow); }));
  o.Set("callocOverflow",
        Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Call(i, CallocOverflow); }));
  o.Set("reallocOverflow",
        Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Call(i, ReallocOverflow); }));
  o.Set("newArrayOverflow",
        Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Call(i, NewArrayOverflow); }));
  o.Set("vectorOverflow",
        Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Call(i, VectorOverflow); }));
  o.Set("mallocUnderflow",
        Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Call(i, MallocUnderflow); }));
  o.Set("useAfterFree", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Call(i, UseAfterFree); }));
  o.Set("doubleFree", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Call(i, DoubleFree); }));
  o.Set("invalidFree", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Call(i, InvalidFree); }));
  o.Set("churn", Napi::Function::New(env, [](const Napi::CallbackInfo& i) {
          return Napi::Number::New(i.Env(), static_cast<double>(Churn(Arg(i, 0, 1000), Arg(i, 1, 64))));
        }));
  o.Set("everyForm",
        Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Napi::Number::New(i.Env(), EveryForm()); }));
  o.Set("libcOwned", Napi::Function::New(env, [](const Napi::CallbackInfo& i) {
          return Napi::Number::New(i.Env(), static_cast<double>(LibcOwned()));
        }));
  o.Set("threads", Napi::Function::New(env, [](const Napi::CallbackInfo& i) {
          return Napi::Number::New(i.Env(), static_cast<double>(Threads(Arg(i, 0, 4), Arg(i, 1, 1000))));
        }));
  o.Set("churnThreads", Napi::Function::New(env, [](const Napi::CallbackInfo& i) {
          return Napi::Number::New(i.Env(),
                                   static_cast<double>(ChurnThreads(Arg(i, 0, 2), Arg(i, 1, 1000), Arg(i, 2, 64))));
        }));
  o.Set("throwThenAllocate", Napi::Function::New(env, ThrowThenAllocate));
  o.Set("doubleFreesAround", Napi::Function::New(env, DoubleFreesAround));
  o.Set("poolThread", Napi::Function::New(env, [](const Napi::CallbackInfo& i) {
          bool overflow = i.Length() > 1 && i[1].ToBoolean().Value();
          (new PoolWorker(i[0].As<Napi::Function>(), overflow))->Queue();
          return i.Env().Undefined();
        }));
  exports.Set("nativeHeap", o);
}
