#include "report/report_kind.h"

namespace mate {

const char* ReportKindName(ReportKind kind) {
  switch (kind) {
#define MATE_KIND_NAME(id, name) \
  case ReportKind::id:           \
    return name;
    MATE_REPORT_KINDS(MATE_KIND_NAME)
#undef MATE_KIND_NAME
  }
  return "unknown";
}

const char* AccessTypeName(AccessType access) {
  switch (access) {
    case AccessType::kNone:
      return nullptr;
    case AccessType::kRead:
      return "READ";
    case AccessType::kWrite:
      return "WRITE";
    case AccessType::kUnknown:
      return "ACCESS";
  }
  return nullptr;
}

}  // namespace mate
