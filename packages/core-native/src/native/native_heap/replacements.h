#ifndef MATE_NATIVE_HEAP_REPLACEMENTS_H_
#define MATE_NATIVE_HEAP_REPLACEMENTS_H_

#include <cstddef>

#include "platform/import_patcher.h"

namespace mate {
namespace native_heap {

// The allocator imports a chosen module's slots are pointed at: C
// allocation functions and every operator new/delete form (LP64 mangling).
const platform::ImportRedirect* Replacements(size_t* count);

// Whether the process's operator new/delete are libstdc++'s (malloc's
// memory): the foreign quarantine holds deleted blocks only then.
bool NewTakesFromMalloc();

}  // namespace native_heap
}  // namespace mate

#endif  // MATE_NATIVE_HEAP_REPLACEMENTS_H_
