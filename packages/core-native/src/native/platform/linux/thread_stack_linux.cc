#include "platform/thread_stack.h"

#include <pthread.h>

namespace mate {
namespace platform {

bool CurrentThreadStack(uintptr_t* lo, uintptr_t* hi) {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return false;
  void* base = nullptr;
  size_t size = 0;
  bool ok = pthread_attr_getstack(&attr, &base, &size) == 0;
  pthread_attr_destroy(&attr);
  if (!ok || size == 0) return false;
  *lo = reinterpret_cast<uintptr_t>(base);
  *hi = *lo + size;
  return true;
}

}  // namespace platform
}  // namespace mate
