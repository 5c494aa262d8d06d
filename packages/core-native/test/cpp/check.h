#ifndef MATE_TEST_CPP_CHECK_H_
#define MATE_TEST_CPP_CHECK_H_

// The C++ unit tier's harness, just enough of one: TEST(name) registers a
// case, CHECK(cond) and CHECK_EQ(a, b) fail it with the file and line. The
// runner (unit_main.cc) runs every case and ends with `N passed, N failed`.
#include <stdio.h>

#include <functional>
#include <string>
#include <vector>

namespace mate_test {

struct Case {
  const char* name;
  std::function<void(bool*)> fn;
};

inline std::vector<Case>& Cases() {
  static std::vector<Case> cases;
  return cases;
}

struct Register {
  Register(const char* name, void (*fn)(bool*)) { Cases().push_back({name, fn}); }
};

}  // namespace mate_test

#define TEST(name)                                              \
  static void name(bool* mate_test_failed);                     \
  static ::mate_test::Register name##_registered(#name, &name); \
  static void name(bool* mate_test_failed)

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
      *mate_test_failed = true;                                                  \
    }                                                                            \
  } while (0)

#define CHECK_EQ(a, b)                                                                            \
  do {                                                                                            \
    auto mate_a = (a);                                                                            \
    auto mate_b = (b);                                                                            \
    if (!(mate_a == mate_b)) {                                                                    \
      fprintf(stderr, "  %s:%d: CHECK_EQ(%s, %s) failed: %s vs %s\n", __FILE__, __LINE__, #a, #b, \
              std::to_string(static_cast<long long>(mate_a)).c_str(),                             \
              std::to_string(static_cast<long long>(mate_b)).c_str());                            \
      *mate_test_failed = true;                                                                   \
    }                                                                                             \
  } while (0)

#endif  // MATE_TEST_CPP_CHECK_H_
