#include "binding/external_buffer.h"

#include <memory>
#include <new>

#include "engine/v8_symbols.h"

namespace mate {

namespace {
ReleaseFn g_release = nullptr;  // one release function per process (the allocator's)

void OnV8Delete(void* data, size_t /*length*/, void* /*deleter_data*/) { g_release(data); }
void OnNapiFinalize(napi_env /*env*/, void* data, void* hint) { reinterpret_cast<ReleaseFn>(hint)(data); }
void NoRelease(void*, size_t, void*) {}

// V8's own way: a backing store with a deleter. The Local it returns is what
// Node-API calls a napi_value (a pointer to the handle slot).
napi_value ViaV8(void* data, size_t length, engine::BackingStoreDeleter deleter) {
  const engine::V8Api& v8 = engine::V8();
  engine::Isolate* isolate = v8.get_current();
  if (isolate == nullptr) return nullptr;
  engine::UniqueBackingStore made = v8.new_backing_store(data, length, deleter, nullptr);
  if (made.ptr == nullptr) return nullptr;
  void (*dtor)(engine::BackingStore*) = v8.backing_store_dtor;
  std::shared_ptr<engine::BackingStore> shared(made.ptr, [dtor](engine::BackingStore* b) {
    dtor(b);
    ::operator delete(b);  // v8::BackingStore::operator delete
  });
  return static_cast<napi_value>(v8.array_buffer_new(isolate, std::move(shared)));
}

// Once per process: the V8 path is used only if a buffer made that way reads
// back through Node-API as the same memory. V8 then sweeps dead ArrayBuffers
// inside the GC pause instead of on a background job that may lag behind:
// a dropped buffer is released by the collection that finds it dead, as
// promptly as a Node-API finalizer (a turn later) or sooner.
bool V8PathWorks(napi_env env) {
  static int state = -1;  // -1 unknown, 0 no, 1 yes
  if (state >= 0) return state == 1;
  state = 0;
  if (!engine::HasBackingStoreDeleters()) return false;
  static char probe[16];
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return false;
  napi_value ab = ViaV8(probe, sizeof(probe), NoRelease);
  bool is_ab = false;
  void* data = nullptr;
  size_t length = 0;
  if (ab != nullptr && napi_is_arraybuffer(env, ab, &is_ab) == napi_ok && is_ab &&
      napi_get_arraybuffer_info(env, ab, &data, &length) == napi_ok && data == probe && length == sizeof(probe)) {
    engine::V8().set_flags_from_string("--no-concurrent-array-buffer-sweeping");
    state = 1;
  }
  napi_close_handle_scope(env, scope);
  return state == 1;
}
}  // namespace

bool ReleasedDuringGC(napi_env env) { return V8PathWorks(env); }

napi_value NewExternalArrayBuffer(napi_env env, void* data, size_t length, ReleaseFn release) {
  if (V8PathWorks(env)) {
    g_release = release;
    napi_value ab = ViaV8(data, length, OnV8Delete);
    if (ab != nullptr) return ab;
  }
  napi_value ab = nullptr;
  if (napi_create_external_arraybuffer(env, data, length, OnNapiFinalize, reinterpret_cast<void*>(release), &ab) !=
      napi_ok)
    return nullptr;
  return ab;
}

}  // namespace mate
