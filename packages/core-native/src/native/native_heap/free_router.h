#ifndef MATE_NATIVE_HEAP_FREE_ROUTER_H_
#define MATE_NATIVE_HEAP_FREE_ROUTER_H_

#include <cstddef>

#include "platform/import_patcher.h"

// The free side of the native heap, process-wide. A guarded pointer may be
// freed, reallocated or measured by code outside the chosen modules: the
// executable's own copies of C++ templates (std::vector<int>::
// _M_default_append, exported by node, binds an addon's call to Node's
// code), libstdc++, libc (getline's realloc), Node freeing a buffer an
// addon handed it. Every module's free, realloc, reallocarray and
// malloc_usable_size imports, libc's own included, are bound to the router:
// it recognises a guarded pointer in O(1) (one range check, as GWP-ASan's
// free path does) and brings it home; any other pointer goes to the real
// function untouched. C++ delete reaches it through libstdc++'s free.
namespace mate {
namespace native_heap {

const platform::ImportRedirect* FreeRoutes(size_t* count);

}  // namespace native_heap
}  // namespace mate

#endif  // MATE_NATIVE_HEAP_FREE_ROUTER_H_
