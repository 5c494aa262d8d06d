// PyTorch's allocator reports a failed allocation by throwing
// c10::OutOfMemoryError, which its Python bindings turn into
// torch.OutOfMemoryError; a pluggable allocator's null pointer it would
// take for memory (a loop allocating until the error never ends). Built
// without PyTorch's headers: the exception is made by libc10's own
// constructor, found at run time, and thrown with libc10's own type
// information, so PyTorch's handlers catch it as theirs.
#include "device/embed/torch_oom.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <string.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <typeinfo>

namespace mate {
namespace device {
namespace {

// c10::SourceLocation, passed by value to c10::Error's constructor.
struct SourceLocation {
  const char* function;
  const char* file;
  uint32_t line;
};
using ErrorCtor = void (*)(void* self, SourceLocation where, std::string message);
using Dtor = void (*)(void*);

// Room for a c10::Error (a few hundred bytes in every release): the
// object is made in place by libc10, so only its size must fit.
constexpr size_t kErrorRoom = 2048;

void* Find(const char* symbol) {
  if (void* p = dlsym(RTLD_DEFAULT, symbol)) return p;
  // PyTorch's libraries are loaded without RTLD_GLOBAL: ask each by name.
  for (const char* lib : {"libc10.so", "libc10_cuda.so", "libtorch_cuda.so", "libtorch_python.so"}) {
    void* h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);
    if (h == nullptr) continue;
    void* p = dlsym(h, symbol);
    dlclose(h);
    if (p) return p;
  }
  return nullptr;
}

}  // namespace

void ThrowTorchOutOfMemory(const char* message) {
  void* ctor = Find("_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE");
  if (ctor == nullptr)
    ctor = Find("_ZN3c105ErrorC1ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE");
  void* vtable = Find("_ZTVN3c1016OutOfMemoryErrorE");
  void* type = Find("_ZTIN3c1016OutOfMemoryErrorE");
  if (ctor && vtable && type) {
    // The destructors are inline (no symbol): the complete-object one is
    // the vtable's first entry (c10::Error's first base is std::exception,
    // whose vtable starts with its virtual destructor).
    void** entries = reinterpret_cast<void**>(static_cast<char*>(vtable) + 2 * sizeof(void*));
    void* dtor = entries[0];
    void* e = __cxxabiv1::__cxa_allocate_exception(kErrorRoom);
    memset(e, 0, kErrorRoom);
    reinterpret_cast<ErrorCtor>(ctor)(e, SourceLocation{"mate_guard_torch_alloc", __FILE__, __LINE__},
                                      std::string(message));
    // An OutOfMemoryError is a c10::Error with its own vtable (no members
    // of its own): the vtable's address point is past offset-to-top and RTTI.
    *static_cast<void**>(e) = entries;
    __cxxabiv1::__cxa_throw(e, static_cast<std::type_info*>(type), reinterpret_cast<Dtor>(dtor));
  }
  ThrowTorchError(message);
}

void ThrowTorchError(const char* message) { throw std::runtime_error(message); }

}  // namespace device
}  // namespace mate
