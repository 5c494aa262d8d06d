// device/embed/python_user_code: which Python files are the user's code,
// where a call-site walk may stop. A library called the user's only
// lengthens the walk; the user's code called a library could cut its line off.
#include "check.h"
#include "device/embed/python_user_code.h"

using mate::device::IsUserPythonFile;

namespace {
const char kStdlib[] = "/usr/lib/python3.11/";
}

TEST(a_project_file_and_the_interactive_prompt_are_the_users) {
  CHECK(IsUserPythonFile("/home/u/proj/tests/test_ops.py", kStdlib));
  CHECK(IsUserPythonFile("/tmp/mate-pytest-x/test_device.py", kStdlib));
  CHECK(IsUserPythonFile("<stdin>", kStdlib));
  CHECK(IsUserPythonFile("<ipython-input-3-0a1b2c>", kStdlib));
  CHECK(IsUserPythonFile("/home/u/proj/x.py", ""));  // the stdlib's folder unknown
}

TEST(installed_packages_the_stdlib_and_pseudo_files_are_not) {
  CHECK(!IsUserPythonFile("/venv/lib/python3.11/site-packages/_pytest/python.py", kStdlib));
  CHECK(!IsUserPythonFile("/usr/lib/python3/dist-packages/numpy/core/numeric.py", kStdlib));
  CHECK(!IsUserPythonFile("/usr/lib/python3.11/contextlib.py", kStdlib));
  CHECK(!IsUserPythonFile("<frozen runpy>", kStdlib));
  CHECK(!IsUserPythonFile("<string>", kStdlib));
  CHECK(!IsUserPythonFile("<eval_with_key>.3", kStdlib));
  CHECK(!IsUserPythonFile("", kStdlib));
  CHECK(!IsUserPythonFile("?", kStdlib));
}

TEST(torch_and_triton_from_a_source_checkout_and_generated_code_are_not) {
  CHECK(!IsUserPythonFile("/src/pytorch/torch/nn/modules/module.py", kStdlib));
  CHECK(!IsUserPythonFile("/src/triton/python/triton/runtime/jit.py", kStdlib));
  CHECK(!IsUserPythonFile("/tmp/torchinductor_u/ab/cabcdef.py", kStdlib));
  CHECK(!IsUserPythonFile("/home/u/.triton/cache/x/launcher.py", kStdlib));
}
