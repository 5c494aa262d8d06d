/*
 * mate_guard.h: the C ABI of mate-guard's CUDA device guard, for native
 * addons (and Python extensions) that allocate device memory themselves.
 *
 * Header-only on the caller's side: nothing to link. The functions below
 * find the guard in the running process (mate-guard's Node core,
 * mate_guard.node, or the plain library libmate_guard_cuda.so) through the
 * dynamic loader the first time they are called, and report
 * MATE_GUARD_NOT_INSTALLED when it is absent or its device guard is off:
 * allocate as usual then.
 *
 *   void* p;
 *   int r = mate_guard_cuda_alloc(&p, bytes, stream);
 *   if (r == MATE_GUARD_NOT_INSTALLED) r = cudaMalloc(&p, bytes);
 *   ...
 *   if (mate_guard_cuda_free(p, stream) == MATE_GUARD_NOT_INSTALLED) cudaFree(p);
 *
 * An addon that links the CUDA runtime shared needs none of this: its own
 * cudaMalloc/cudaFree/cudaMallocAsync/cudaFreeAsync (and the driver's
 * cuMemAlloc/cuMemFree) are redirected to the guard with no code change.
 * This ABI is for a statically linked runtime, for calls made through
 * looked-up pointers, and for mate_guard_record_stream.
 *
 * Results are CUresult codes (0 = success; they equal cudaError_t for the
 * cases that occur here: 1 invalid value, 2 out of memory, 700 illegal
 * address). Streams are CUstream / cudaStream_t, passed as void*.
 * Linux only; link with -ldl on glibc older than 2.34.
 */
#ifndef MATE_GUARD_H_
#define MATE_GUARD_H_

#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MATE_GUARD_API_VERSION 1u
/* The guard is not in this process, or its device guard is not on. */
#define MATE_GUARD_NOT_INSTALLED (-1)

typedef struct mate_guard_cuda_stats {
  uint64_t allocations; /* guarded allocations made */
  uint64_t frees;
  uint64_t live; /* guarded allocations live now */
  uint64_t peak_live;
  uint64_t live_bytes;     /* bytes requested by live allocations */
  uint64_t fallbacks;      /* allocations that could not be guarded (plain cuMemAlloc) */
  uint64_t quarantined;    /* freed ranges kept unmapped */
  uint64_t physical_bytes; /* device memory the guard holds (live, ready, pooled) */
  uint64_t violations;     /* reports made */
  uint64_t granule;        /* bytes of one mapping granule (2 MiB): each live allocation holds >= 1 */
} mate_guard_cuda_stats;

typedef struct mate_guard_api {
  uint32_t version; /* MATE_GUARD_API_VERSION */
  uint32_t size;    /* sizeof(mate_guard_api) of the provider */
  /* 1 when device allocations are guarded in this process. */
  int (*cuda_installed)(void);
  /* A guarded allocation of `size` bytes, usable on `stream` in stream
   * order (like cudaMallocAsync). Falls back to a plain allocation (counted,
   * warned once at exit) when it cannot be guarded. */
  int (*cuda_alloc)(void** ptr, size_t size, void* stream);
  /* Frees in stream order: the canary check and unmapping wait for the
   * work queued on `stream` (and on streams given to cuda_record_stream).
   * Pointers the guard did not hand out are freed with cuMemFree. */
  int (*cuda_free)(void* ptr, void* stream);
  /* Declares that `stream` (not the freeing one) uses the allocation, as
   * PyTorch's Tensor.record_stream does: its free then waits for that
   * stream's queued work too, and the cross-stream-free check (launch
   * tracking) accepts the use. */
  int (*cuda_record_stream)(void* ptr, void* stream);
  int (*cuda_stats)(mate_guard_cuda_stats* out, size_t out_size);
  /* 1 when `ptr` lies in the guard's address space. */
  int (*cuda_owns)(const void* ptr);
  /* Replacements with the CUDA signatures, for redirecting a module's own
   * imports of that name: "cudaMalloc", "cudaFree", "cudaMallocAsync",
   * "cudaFreeAsync", "cuMemAlloc", "cuMemAlloc_v2", "cuMemFree",
   * "cuMemFree_v2", "cuMemAllocAsync", "cuMemFreeAsync". NULL for others.
   * They pass through to the driver when the device guard is off. */
  void* (*cuda_replacement)(const char* symbol);
  /* Why the last call failed, or why the guard is not installed. */
  const char* (*last_error)(void);
} mate_guard_api;

/* Exported by mate-guard itself; callers use mate_guard_api_get(). */
const mate_guard_api* mate_guard_get_api(uint32_t version);

typedef const mate_guard_api* (*mate_guard_get_api_fn)(uint32_t);

static inline int mate_guard_find_provider_(struct dl_phdr_info* info, size_t size, void* data) {
  static const char* const names[] = {"/mate_guard.node", "/libmate_guard_cuda.so"};
  size_t n = info->dlpi_name ? strlen(info->dlpi_name) : 0;
  size_t i;
  (void)size;
  for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    size_t k = strlen(names[i]);
    if (n >= k && strcmp(info->dlpi_name + n - k, names[i]) == 0) {
      *(const char**)data = info->dlpi_name;
      return 1;
    }
  }
  return 0;
}

/* The guard's API table, or NULL when no guard is loaded in this process.
 * Node loads addons with local symbol scope, so the provider is found by
 * name among the loaded objects rather than in the global scope. */
static inline const mate_guard_api* mate_guard_api_get(void) {
  static const mate_guard_api* cached;
  const mate_guard_api* api = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
  mate_guard_get_api_fn get;
  const char* path = NULL;
  if (api) return api;
  get = (mate_guard_get_api_fn)dlsym(((void*)0) /* RTLD_DEFAULT */, "mate_guard_get_api");
  if (!get) {
    dl_iterate_phdr(mate_guard_find_provider_, (void*)&path);
    if (path) {
      void* handle = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
      if (handle) get = (mate_guard_get_api_fn)dlsym(handle, "mate_guard_get_api");
    }
  }
  api = get ? get(MATE_GUARD_API_VERSION) : NULL;
  if (api) __atomic_store_n(&cached, api, __ATOMIC_RELEASE);
  return api;
}

static inline int mate_guard_cuda_installed(void) {
  const mate_guard_api* a = mate_guard_api_get();
  return a != NULL && a->cuda_installed();
}

static inline int mate_guard_cuda_alloc(void** ptr, size_t size, void* stream) {
  const mate_guard_api* a = mate_guard_api_get();
  return a != NULL ? a->cuda_alloc(ptr, size, stream) : MATE_GUARD_NOT_INSTALLED;
}

static inline int mate_guard_cuda_free(void* ptr, void* stream) {
  const mate_guard_api* a = mate_guard_api_get();
  return a != NULL ? a->cuda_free(ptr, stream) : MATE_GUARD_NOT_INSTALLED;
}

static inline int mate_guard_record_stream(void* ptr, void* stream) {
  const mate_guard_api* a = mate_guard_api_get();
  return a != NULL ? a->cuda_record_stream(ptr, stream) : MATE_GUARD_NOT_INSTALLED;
}

static inline int mate_guard_cuda_get_stats(mate_guard_cuda_stats* out) {
  const mate_guard_api* a = mate_guard_api_get();
  return a != NULL ? a->cuda_stats(out, sizeof(*out)) : MATE_GUARD_NOT_INSTALLED;
}

static inline const char* mate_guard_last_error(void) {
  const mate_guard_api* a = mate_guard_api_get();
  return a != NULL ? a->last_error() : "mate-guard is not loaded in this process";
}

#ifdef __cplusplus
}
#endif

#endif /* MATE_GUARD_H_ */
