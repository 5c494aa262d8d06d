#ifndef MATE_DEVICE_PYTHON_USER_CODE_H_
#define MATE_DEVICE_PYTHON_USER_CODE_H_

#include <string>

// Whether a Python code object's file (co_filename) is the user's own code,
// for where a call-site walk may stop: not an installed package
// (site-packages, dist-packages), not the standard library (`stdlib_dir`,
// ending in a separator; empty: unknown), not "<frozen ...>", "<string>" or
// another pseudo-file ("<stdin>" and IPython's cells are the user's), not
// torch's or Triton's own files from a source checkout, not
// torch.compile's generated code. Calling the user's code a library only
// makes the walk longer; the other way round could cut the user's line off.
namespace mate {
namespace device {

bool IsUserPythonFile(const std::string& file, const std::string& stdlib_dir);

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_PYTHON_USER_CODE_H_
