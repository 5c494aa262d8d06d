// bench/python_call_sites.py's way into the Python call-site capture
// (device/embed/python_site.cc) with nothing else of the guard around it.
#include "device/embed/python_site.h"

// `n` captures of the calling thread's stack, at most `max_frames` deep (0:
// none, the baseline); returns the last stack's id.
extern "C" unsigned mate_bench_capture(int n, int max_frames) {
  volatile unsigned id = 0;
  for (int i = 0; i < n; i++) id = max_frames > 0 ? mate::device::CapturePythonStackUpTo(max_frames) : 1;
  return id;
}
