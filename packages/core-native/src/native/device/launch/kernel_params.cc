#include "device/launch/kernel_params.h"

#include <cstring>
#include <utility>

#include "core/stack_store.h"

namespace mate {
namespace device {

namespace {
constexpr size_t kMaxParams = 512;
}  // namespace

const Kernel& KernelTable::Of(const cuda::Driver* drv, cuda::CUfunction f, const char* symbol) {
  auto it = kernels_.find(f);
  if (it != kernels_.end()) return it->second;
  Kernel k;
  const char* name = symbol;
  if ((name == nullptr || *name == '\0') && f != nullptr && drv->cuFuncGetName) drv->cuFuncGetName(&name, f);
  if (name == nullptr || *name == '\0') name = "(unnamed kernel)";
  k.name = StackStore::Get().Intern(name, strlen(name));
  // A CUfunction, or a CUkernel (the CUDA runtime's launches): whichever
  // query answers for the first parameter reads them all.
  using Query = cuda::CUresult (*)(cuda::CUfunction, size_t, size_t*, size_t*);
  cuda::CUfunction from_kernel = nullptr;
  if (f != nullptr && drv->cuKernelGetFunction && drv->cuKernelGetFunction(&from_kernel, f) != cuda::kSuccess)
    from_kernel = nullptr;
  const std::pair<Query, cuda::CUfunction> queries[] = {
      {drv->cuFuncGetParamInfo, f}, {drv->cuKernelGetParamInfo, f}, {drv->cuFuncGetParamInfo, from_kernel}};
  for (const auto& [query, handle] : queries) {
    size_t off = 0, size = 0;
    if (query == nullptr || handle == nullptr || query(handle, 0, &off, &size) != cuda::kSuccess) continue;
    for (size_t i = 0; i < kMaxParams && query(handle, i, &off, &size) == cuda::kSuccess; i++)
      k.params.push_back(KernelParam{static_cast<uint32_t>(off), static_cast<uint32_t>(size)});
    break;
  }
  // No answer: a kernel without parameters, or a handle neither query knows.
  k.layout = !k.params.empty();
  return kernels_.emplace(f, std::move(k)).first->second;
}

const uint8_t* ExtraBuffer(void** extra) {
  for (size_t i = 0; extra && extra[i] != nullptr && i < 16; i += 2) {
    if (extra[i] == reinterpret_cast<void*>(1))
      return static_cast<const uint8_t*>(extra[i + 1]);  // CU_LAUNCH_PARAM_BUFFER_POINTER
  }
  return nullptr;
}

}  // namespace device
}  // namespace mate
