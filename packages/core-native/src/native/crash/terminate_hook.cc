// Built with exceptions on (the only file of the crash layer that is): the
// hook rethrows the current exception to read what().
#include "crash/terminate_hook.h"

#include <cxxabi.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <typeinfo>

namespace mate {

namespace {

std::terminate_handler g_previous = nullptr;
bool g_installed = false;
char g_type[512];
char g_what[2048];
UncaughtException g_exception{nullptr, nullptr};
long g_tid = 0;  // the thread std::terminate ran on, 0: none

void CopyTo(char* dst, size_t cap, const char* src) {
  size_t n = strlen(src);
  if (n >= cap) n = cap - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

void Record() {
  std::type_info* t = abi::__cxa_current_exception_type();
  if (t == nullptr) return;  // std::terminate called directly, no exception
  const char* mangled = t->name();
  int status = -1;
  // Not a signal handler: the demangler may allocate.
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  CopyTo(g_type, sizeof(g_type), status == 0 && demangled ? demangled : mangled);
  free(demangled);
  g_exception.type = g_type;
  g_exception.what = nullptr;
  try {
    std::rethrow_exception(std::current_exception());
  } catch (const std::exception& e) {
    CopyTo(g_what, sizeof(g_what), e.what());
    g_exception.what = g_what;
  } catch (...) {
  }
  __atomic_store_n(&g_tid, static_cast<long>(syscall(SYS_gettid)), __ATOMIC_RELEASE);
}

[[noreturn]] void OnTerminate() {
  // One thread records; a second one terminating meanwhile only chains.
  static int once = 0;
  if (__atomic_exchange_n(&once, 1, __ATOMIC_ACQ_REL) == 0) Record();
  if (g_previous != nullptr) g_previous();
  abort();
}

}  // namespace

void InstallTerminateHook() {
  if (g_installed) return;
  g_installed = true;
  g_previous = std::set_terminate(OnTerminate);
  if (g_previous == OnTerminate) g_previous = nullptr;
}

const UncaughtException* UncaughtOnThisThread() {
  long tid = __atomic_load_n(&g_tid, __ATOMIC_ACQUIRE);
  if (tid == 0 || tid != static_cast<long>(syscall(SYS_gettid))) return nullptr;
  return &g_exception;
}

}  // namespace mate
