// Correct C++ whose memory crosses module borders, as real addons' does:
// guarding the addon's heap (`--native '*buggy_addon.node'`) must not break
// any of it. Each function allocates on one side of a border and frees,
// grows or measures on the other, and returns a value the caller checks.
#include <napi.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "borders.h"

// node::Buffer::New(isolate, data, length): the buffer owns `data` and Node
// frees it with free() when it is collected (what NAN's Nan::NewBuffer
// does). Declared here because Node-API builds have no node.h; only the
// symbol is needed (the return value is one handle, read as napi_value).
namespace v8 {
class Isolate {
 public:
  static Isolate* GetCurrent();
};
}  // namespace v8
namespace node {
namespace Buffer {
void* New(v8::Isolate* isolate, char* data, size_t length);
}  // namespace Buffer
}  // namespace node

namespace {

template <typename T>
T* Opaque(T* p) {
  asm volatile("" : "+r"(p));
  return p;
}

// The first buffer is allocated here (the constructor is inlined); resize()
// calls std::vector<int>::_M_default_append, which the node executable also
// exports, so the dynamic linker binds the call to Node's copy: Node's code
// frees the addon's buffer and allocates the new one.
__attribute__((noinline)) int64_t VectorGrow() {
  std::vector<int> v(12, 1);
  v.resize(1000);
  for (size_t i = 12; i < v.size(); i++) v[i] = 2;
  std::vector<int> w;
  for (int i = 0; i < 300; i++) w.emplace_back(i);  // _M_realloc_insert<int>, also Node's
  int64_t sum = 0;
  for (int x : v) sum += x;
  for (int x : w) sum += x;
  return sum;  // 12 + 988 * 2 + 44850 = 46838
}

// std::string's members live in libstdc++ (explicit instantiations): a
// buffer this module reserved is grown and freed there.
__attribute__((noinline)) int64_t StringGrow() {
  std::string s;
  s.reserve(20);
  s.assign("0123456789abcdefghij");
  for (int i = 0; i < 50; i++) s.append("-grown-inside-libstdc++-");
  s.insert(0, "head:");
  s.replace(0, 5, "HEAD::");
  std::string t(Opaque(s.c_str()));
  t.shrink_to_fit();
  return static_cast<int64_t>(s.size() + t.size());
}

// libc allocates, the module frees; and libc grows a buffer the module
// allocated (getline's realloc runs inside libc).
__attribute__((noinline)) int64_t LibcStrings() {
  int64_t total = 0;
  char* d = strdup("a string strdup'ed");
  total += static_cast<int64_t>(strlen(d));
  free(d);
  char* real = realpath("/", nullptr);
  if (real) total += static_cast<int64_t>(strlen(real));
  free(real);
  char* text = nullptr;
  size_t text_len = 0;
  if (FILE* ms = open_memstream(&text, &text_len)) {
    for (int i = 0; i < 100; i++) fprintf(ms, "line %d of a memstream\n", i);
    fclose(ms);
    total += static_cast<int64_t>(text_len);
  }
  // getline with a small buffer of ours: libc reallocs it while reading.
  size_t cap = 8;
  auto* line = static_cast<char*>(malloc(cap));
  if (FILE* in = fmemopen(text, text_len, "r")) {
    ssize_t n;
    while ((n = getline(&line, &cap, in)) > 0) total += n;
    fclose(in);
  }
  free(line);
  free(text);
  auto* sized = static_cast<char*>(malloc(100));
  total += malloc_usable_size(sized) >= 100 ? 1 : 0;
  free(sized);
  return total;
}

// A Buffer over memory this module malloc'ed; Node frees it when collected.
Napi::Value NodeOwnedBuffer(const Napi::CallbackInfo& info) {
  size_t n = info[0].As<Napi::Number>().Uint32Value();
  auto* data = static_cast<char*>(malloc(n));
  for (size_t i = 0; i < n; i++) data[i] = static_cast<char>('a' + i % 26);
  void* handle = node::Buffer::New(v8::Isolate::GetCurrent(), data, n);
  if (handle == nullptr) {
    free(data);
    return info.Env().Null();
  }
  return Napi::Value(info.Env(), reinterpret_cast<napi_value>(handle));
}

Napi::Value Number(const Napi::CallbackInfo& info, int64_t v) {
  return Napi::Number::New(info.Env(), static_cast<double>(v));
}

}  // namespace

void InitBorders(Napi::Env env, Napi::Object exports) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("vectorGrow", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Number(i, VectorGrow()); }));
  o.Set("stringGrow", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Number(i, StringGrow()); }));
  o.Set("libcStrings", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Number(i, LibcStrings()); }));
  o.Set("nodeOwnedBuffer", Napi::Function::New(env, NodeOwnedBuffer));
  exports.Set("borders", o);
}
