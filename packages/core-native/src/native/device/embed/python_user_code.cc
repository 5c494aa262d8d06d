#include "device/embed/python_user_code.h"

namespace mate {
namespace device {

namespace {

bool Has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

}  // namespace

bool IsUserPythonFile(const std::string& file, const std::string& stdlib_dir) {
  if (file.empty() || file == "?") return false;
  if (file[0] == '<') return file == "<stdin>" || file.compare(0, 15, "<ipython-input-") == 0;
  if (!stdlib_dir.empty() && file.compare(0, stdlib_dir.size(), stdlib_dir) == 0) return false;
  for (const char* dir :
       {"/site-packages/", "/dist-packages/", "/torch/", "/triton/", "/torchinductor_", "/.triton/"}) {
    if (Has(file, dir)) return false;
  }
  return true;
}

}  // namespace device
}  // namespace mate
