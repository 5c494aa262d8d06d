#include "device/launch/input_dump.h"

#include <cxxabi.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>
#include <memory>
#include <mutex>

#include "platform/private_files.h"
#include "report/report_file.h"

namespace mate {
namespace device {

namespace {

// A Python call site as the index gives it: from the user's own line on.
// The frames inside installed packages before it (Triton's launcher,
// torch's dispatch) are counted on a last line, as reports count a
// runner's frames; a site with no user frame is kept whole.
std::string UserFirst(const char* site) {
  if (site == nullptr) return "";
  std::string all = site, rest;
  size_t pos = 0;
  int dropped = 0;
  std::string packages;
  bool user = false;
  while (pos < all.size()) {
    size_t end = all.find('\n', pos);
    std::string line = all.substr(pos, end == std::string::npos ? std::string::npos : end - pos + 1);
    pos = end == std::string::npos ? all.size() : end + 1;
    if (user) {
      rest += line;
      continue;
    }
    size_t at = line.find("-packages/");
    if (at == std::string::npos && line.find("(<frozen ") == std::string::npos) {
      user = true;
      rest += line;
      continue;
    }
    dropped++;
    if (at != std::string::npos) {
      std::string pkg = line.substr(at + 10, line.find_first_of("/.:)", at + 10) - at - 10);
      if (!pkg.empty() && packages.find(pkg) == std::string::npos) packages += (packages.empty() ? "" : ", ") + pkg;
    }
  }
  if (!user || dropped == 0) return all;
  return rest + "    (" + std::to_string(dropped) + " framework frame" + (dropped == 1 ? "" : "s") + " before it" +
         (packages.empty() ? "" : ": " + packages) + ")\n";
}

struct State {
  std::mutex mu;
  const Options* options = nullptr;  // dumpInputs: the kernel glob
  bool on = false;
  uint64_t saved_bytes = 0;  // this process's total
  bool broken = false;       // a copy failed (the context's sticky error): no more copies
};

State& S() {
  static State* s = new State();  // never destroyed: launches may come during exit
  return *s;
}

void JsonStr(std::string* out, const char* s) {
  if (s == nullptr) {
    *out += "null";
    return;
  }
  *out += '"';
  for (; *s; s++) {
    unsigned char c = static_cast<unsigned char>(*s);
    if (c == '"' || c == '\\') {
      *out += '\\';
      *out += static_cast<char>(c);
    } else if (c == '\n') {
      *out += "\\n";
    } else if (c < 0x20) {
      char buf[8];
      snprintf(buf, sizeof(buf), "\\u%04x", c);
      *out += buf;
    } else {
      *out += static_cast<char>(c);
    }
  }
  *out += '"';
}

void Field(std::string* out, const char* name, uint64_t v) {
  char buf[64];
  snprintf(buf, sizeof(buf), ",\"%s\":%" PRIu64, name, v);
  *out += buf;
}

void HexField(std::string* out, const char* name, uint64_t v) {
  char buf[64];
  snprintf(buf, sizeof(buf), ",\"%s\":\"0x%" PRIx64 "\"", name, v);
  *out += buf;
}

// Both never through a link (platform/private_files.h): the report folder may be one others can read.
bool WriteAll(const std::string& file, const void* data, size_t n) {
  int fd = platform::OpenNewFile(file.c_str());
  if (fd < 0) return false;
  const char* p = static_cast<const char*>(data);
  size_t done = 0;
  while (done < n) {
    ssize_t w = write(fd, p + done, n - done);
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  return close(fd) == 0 && done == n;
}

void AppendLine(const std::string& file, const std::string& line) {
  int fd = platform::OpenAppendFile(file.c_str());
  if (fd < 0) return;
  std::string whole = line + '\n';
  ssize_t w = write(fd, whole.data(), whole.size());
  (void)w;
  close(fd);
}

}  // namespace

void ConfigureDump(const Options* options) {
  State& st = S();
  std::lock_guard<std::mutex> lock(st.mu);
  st.options = options;
  __atomic_store_n(&st.on, !options->dump_inputs.empty(), __ATOMIC_RELEASE);
}

bool DumpingInputs() { return __atomic_load_n(&S().on, __ATOMIC_ACQUIRE); }

bool DumpWanted(const char* kernel) {
  State& st = S();
  std::lock_guard<std::mutex> lock(st.mu);
  if (!st.on || kernel == nullptr) return false;
  const char* glob = st.options->dump_inputs.c_str();
  if (fnmatch(glob, kernel, 0) == 0) return true;
  // C++ kernels: the glob may name them as reports show them (demangled).
  int status = 0;
  char* readable = abi::__cxa_demangle(kernel, nullptr, nullptr, &status);
  bool hit = status == 0 && readable != nullptr && fnmatch(glob, readable, 0) == 0;
  free(readable);
  return hit;
}

size_t DumpInputs(const cuda::Driver* drv, const DumpLaunch& launch, const std::vector<DumpInput>& inputs,
                  DeviceLaunchInput* out, size_t cap) {
  State& st = S();
  std::lock_guard<std::mutex> lock(st.mu);
  const char* dir = ReportDir();
  if (dir[0] == '\0' || inputs.empty()) return 0;
  std::string root = std::string(dir) + "/inputs";
  mkdir(root.c_str(), 0755);
  std::string pid = std::to_string(static_cast<unsigned long>(getpid()));
  std::string index = root + "/index-" + pid + ".jsonl";
  size_t saved = 0;
  for (size_t k = 0; k < inputs.size(); k++) {
    const DumpInput& in = inputs[k];
    uint64_t want = in.size < kDumpMaxBytesPerAllocation ? in.size : kDumpMaxBytesPerAllocation;
    std::string rel = "inputs/" + pid + "-" + std::to_string(launch.number) + "-" + std::to_string(k) + ".bin";
    const char* skipped = nullptr;
    if (st.broken) skipped = "an earlier copy failed (the GPU context has a sticky error)";
    else if (st.saved_bytes + want > kDumpMaxBytesPerProcess)
      skipped = "this process reached the cap of 1 GiB of saved inputs";
    std::unique_ptr<uint8_t[]> host;
    if (skipped == nullptr && want > 0) {
      host.reset(new (std::nothrow) uint8_t[want]);
      cuda::CUresult r = host ? drv->cuMemcpyDtoHAsync(host.get(), in.user, want, launch.stream) : cuda::kSuccess;
      if (host && r == cuda::kSuccess) r = drv->cuStreamSynchronize(launch.stream);
      if (!host) {
        skipped = "no host memory for the copy";
      } else if (r != cuda::kSuccess) {
        skipped = "the copy from the GPU failed";
        if (cuda::IsSticky(r)) st.broken = true;
      }
    }
    if (skipped == nullptr && !WriteAll(std::string(dir) + "/" + rel, host.get(), want))
      skipped = "the file could not be written";
    std::string line = "{\"launch\":" + std::to_string(launch.number) + ",\"kernel\":";
    JsonStr(&line, launch.kernel);
    line += ",\"site\":";
    JsonStr(&line, UserFirst(launch.site).c_str());
    line += ",\"test\":";
    JsonStr(&line, launch.test);
    Field(&line, "param", in.param);
    Field(&line, "offset", in.offset);
    HexField(&line, "pointer", in.value);
    Field(&line, "allocation", in.alloc_id);
    HexField(&line, "start", in.user);
    Field(&line, "size", in.size);
    Field(&line, "saved", skipped ? 0 : want);
    line += ",\"truncated\":";
    line += !skipped && want < in.size ? "true" : "false";
    line += ",\"file\":";
    JsonStr(&line, skipped ? nullptr : rel.c_str());
    line += ",\"skipped\":";
    JsonStr(&line, skipped);
    line += '}';
    AppendLine(index, line);
    if (skipped) continue;
    st.saved_bytes += want;
    if (saved < cap) {
      DeviceLaunchInput& o = out[saved];
      o.param = in.param;
      o.alloc_id = in.alloc_id;
      o.size = in.size;
      o.saved = want;
      o.index = static_cast<uint32_t>(k);
    }
    saved++;
  }
  return saved;
}

}  // namespace device
}  // namespace mate
