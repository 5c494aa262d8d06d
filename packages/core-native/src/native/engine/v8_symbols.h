#ifndef MATE_ENGINE_V8_SYMBOLS_H_
#define MATE_ENGINE_V8_SYMBOLS_H_

#include <cstddef>
#include <cstdint>
#include <memory>

// A few V8 entry points that Node-API does not offer, found at run time in the
// node binary (it exports V8's symbols) by their mangled names. Nothing here
// is linked: where a symbol is missing (another runtime, another V8), the
// feature that needs it reports itself unavailable and the caller keeps the
// plain Node-API path. Layouts are declared here, checked against Node 20's
// headers (/usr/include/node: v8-unwinder.h, v8-array-buffer.h).
namespace mate {
namespace engine {

struct Isolate;       // v8::Isolate
struct BackingStore;  // v8::BackingStore
using Local = void*;  // v8::Local<T>: one pointer, returned in a register

// v8::RegisterState
struct RegisterState {
  void* pc = nullptr;
  void* sp = nullptr;
  void* fp = nullptr;
  void* lr = nullptr;
  void* callee_saved = nullptr;  // std::unique_ptr<CalleeSavedRegisters>, empty
};

// v8::SampleInfo
struct SampleInfo {
  size_t frames_count = 0;
  void* external_callback_entry = nullptr;
  void* context = nullptr;
  void* embedder_context = nullptr;
  int vm_state = 0;
  int embedder_state = 0;
};

// std::unique_ptr<v8::BackingStore> as a return value (non-trivial: sret).
struct UniqueBackingStore {
  BackingStore* ptr;
  ~UniqueBackingStore() {}
};

using BackingStoreDeleter = void (*)(void* data, size_t length, void* deleter_data);
using GCCallback = void (*)(Isolate*, int gc_type, int flags, void* data);

struct V8Api {
  Isolate* (*get_current)();
  void (*get_stack_sample)(Isolate*, const RegisterState&, void**, size_t, SampleInfo*);
  void (*add_gc_prologue_callback)(Isolate*, GCCallback, void*, int gc_type_filter);
  void (*add_gc_epilogue_callback)(Isolate*, GCCallback, void*, int gc_type_filter);
  Local (*entered_or_microtask_context)(Isolate*);
  void* (*context_microtask_queue)(Local context);  // v8::MicrotaskQueue*
  intptr_t finished_microtask_count_offset;         // in v8::internal::MicrotaskQueue
  UniqueBackingStore (*new_backing_store)(void*, size_t, BackingStoreDeleter, void*);
  Local (*array_buffer_new)(Isolate*, std::shared_ptr<BackingStore>);
  void (*backing_store_dtor)(BackingStore*);
  void (*set_flags_from_string)(const char* flags);  // v8::V8::SetFlagsFromString
  // For the frame walker: where the isolate keeps its c_entry_fp (the frame
  // pointer of the exit frame of the running API call), and the builtins.
  uintptr_t* (*isolate_address_from_id)(Isolate*, int id);
  void (*embedded_code_range)(Isolate*, const void** start, size_t* length);
  // v8::Isolate::MemoryPressureNotification(MemoryPressureLevel): on the
  // isolate's own thread, kCritical collects at once.
  void (*memory_pressure_notification)(Isolate*, int level);
  // For marking a native call (call_mark.h): v8::Number::New, and where the
  // isolate keeps its HandleScope data's next free slot and block limit
  // (v8::internal::HandleScope::current_next_address / current_limit_address).
  Local (*number_new)(Isolate*, double);
  uintptr_t (*handle_next_address)(Isolate*);
  uintptr_t (*handle_limit_address)(Isolate*);
};

// v8::MemoryPressureLevel (v8-isolate.h).
constexpr int kMemoryPressureCritical = 2;

// v8::internal::IsolateAddressId::kCEntryFPAddress (second in every V8).
constexpr int kCEntryFPAddressId = 1;

// V8's GCType bits (v8-callbacks.h).
constexpr int kGCTypeMinorMarkCompact = 1 << 1;
constexpr int kGCTypeMarkSweepCompact = 1 << 2;
constexpr int kGCTypeAll = 0x1F;  // scavenge .. weak callback processing

// Resolved once; fields are null where a symbol is missing.
const V8Api& V8();

// Raw stack samples and the microtask clock (for stack keys).
bool HasStackSampling();
// External ArrayBuffers whose memory V8 releases during GC (prompt frees).
bool HasBackingStoreDeleters();

}  // namespace engine
}  // namespace mate

#endif  // MATE_ENGINE_V8_SYMBOLS_H_
